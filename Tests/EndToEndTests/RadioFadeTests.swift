import Foundation
import Glibc
import XCTest

/// A real `carbridge run` streaming at S=50 to a TCP car in its own network namespace whose radio
/// fades (its veth goes down) while the driver slows to 0. Protocol §5.6 and §6: at most
/// `max_in_flight` stale motion frames may reach the car when the radio returns, a link that stops
/// draining is declared down within `stall_timeout_ms`, and every new connection starts with the
/// safety handshake. Needs root (CI is root).
final class RadioFadeTests: XCTestCase {
    /// What one fade did, as the car saw it.
    struct Outcome {
        var staleAfterReturn: [String]
        var stallNoticedAfter: Double?
        var secondConnectionFirst: String?
        var handshakeAfterAccept: Double?
    }

    private func fade(seconds outage: Double) throws -> Outcome {
        try TestNetwork.requireRoot()
        let network = try TestNetwork()
        defer { network.tearDown() }
        let car = try CarListener(host: network.carAddress, namespace: network.name)
        defer { car.stop() }
        let terminal = try PseudoTerminal()
        defer { terminal.closeAll() }
        let process = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://\(network.carAddress):\(car.port)", "--log-level", "debug", "--no-view"],
            terminal: terminal)
        defer { if process.process.isRunning { process.signal(SIGKILL) } }
        XCTAssertTrue(car.wait { $0.connectionCount == 1 && !$0.handshakes.isEmpty }, "never connected:\n\(process.stderr)")
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])

        terminal.type("e+++++")  // engine on, S = 50: streaming
        XCTAssertTrue(car.wait { $0.driven.last?.text == "M,0,50,1" }, "\(car.received.map(\.text))")

        let fadeStart = monotonicSeconds()
        try network.setCarLink(up: false)
        // The fault: the stream runs into the dead radio for 0.3 s before the driver slows to 0.
        usleep(300_000)
        terminal.type("-----")
        // The fault goes on: the radio stays down for `outage` s; meanwhile note when the stall is logged.
        var stallNoticed: Double?
        while monotonicSeconds() < fadeStart + outage {
            if stallNoticed == nil, process.stderr.contains("stalled") { stallNoticed = monotonicSeconds() - fadeStart }
            usleep(10_000)
        }
        let fadeEnd = monotonicSeconds()
        try network.setCarLink(up: true)

        // The radio is back: whatever the kernel still held would arrive now; then the reconnect.
        XCTAssertTrue(car.wait(timeout: 12) { $0.connectionCount >= 2 && !$0.received(onConnection: 2).isEmpty },
                      "no reconnect with a handshake within 12 s of the radio's return:\n\(process.stderr)")
        if stallNoticed == nil, car.wait(timeout: 2, { _ in process.stderr.contains("stalled") }) {
            stallNoticed = outage  // noticed only after the outage ended: the outage is an upper bound
        }
        let stale = car.received(onConnection: 1).filter { $0.time > fadeEnd && $0.text.hasPrefix("M,") }
        print("RadioFadeTests: connection 1 around the fade: " + car.received(onConnection: 1).filter { $0.time > fadeStart - 0.2 }
            .map { String(format: "%+.3f %@", $0.time - fadeStart, $0.text) }.joined(separator: ", ")
            + String(format: " (fade ended at %+.3f)", fadeEnd - fadeStart))
        let second = car.received(onConnection: 2)
        let accepted = car.acceptedAt.count >= 2 ? car.acceptedAt[1] : .nan
        process.signal(SIGTERM)
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        return Outcome(
            staleAfterReturn: stale.map(\.text), stallNoticedAfter: stallNoticed,
            secondConnectionFirst: second.first?.text, handshakeAfterAccept: second.first.map { $0.time - accepted })
    }

    private func report(_ name: String, _ outcome: Outcome) {
        let noticed = outcome.stallNoticedAfter.map { String(format: "%.0f ms", $0 * 1000) } ?? "never"
        let handshake = outcome.handshakeAfterAccept.map { String(format: "%.1f ms", $0 * 1000) } ?? "-"
        print("RadioFadeTests \(name): \(outcome.staleAfterReturn.count) stale motion frames after the radio returned; "
              + "stall noticed after \(noticed); new connection's first frame \(outcome.secondConnectionFirst ?? "none") "
              + "\(handshake) after the accept")
    }

    func testShortFadeDeliversNoBacklogAndTheReconnectStartsWithTheStopFrame() throws {
        let outcome = try fade(seconds: 1.5)
        report("1.5 s", outcome)
        XCTAssertLessThanOrEqual(outcome.staleAfterReturn.count, 2,
                                 "stale motion frames replayed after the fade: \(outcome.staleAfterReturn)")
        XCTAssertEqual(outcome.secondConnectionFirst, "M,0,0,1", "the first frame on the new connection must stop the car")
        XCTAssertLessThan(outcome.handshakeAfterAccept ?? .infinity, 0.1)
    }

    func testLongFadeIsNoticedWithinTheStallTimeout() throws {
        let outcome = try fade(seconds: 6)
        report("6 s", outcome)
        XCTAssertLessThanOrEqual(outcome.staleAfterReturn.count, 2,
                                 "stale motion frames replayed after the fade: \(outcome.staleAfterReturn)")
        XCTAssertLessThanOrEqual(outcome.stallNoticedAfter ?? .infinity, 1.0 + 0.5,
                                 "a 6 s outage must be noticed within stall_timeout_ms + 0.5 s")
        XCTAssertEqual(outcome.secondConnectionFirst, "M,0,0,1", "the first frame on the new connection must stop the car")
        XCTAssertLessThan(outcome.handshakeAfterAccept ?? .infinity, 0.1)
    }
}
