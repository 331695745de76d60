import Foundation
import Glibc
import XCTest

/// A real `carbridge run --link tcp://…` whose car goes away and comes back: it reconnects by itself
/// with back-off and never resumes motion on its own afterwards.
final class LinkLossTests: XCTestCase {
    func testCarDropsTheConnectionThenCarbridgeReconnectsWithoutResumingMotion() throws {
        let (car, terminal, process) = try startDriving(["--no-view"])
        defer { terminal.closeAll(); car.stop() }

        terminal.type("e+++")
        XCTAssertTrue(car.waitForStream("M,0,30,1", count: 4), "not streaming S=30: \(car.received.map(\.text))")
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "M,0,20,1", "M,0,30,1"])
        XCTAssertGreaterThan(car.received.filter { $0.text == "M,0,30,1" }.count, 3, "not streaming")

        // The car goes away.
        XCTAssertTrue(car.dropClient())
        XCTAssertTrue(car.wait { $0.closedCount == 1 })
        guard let droppedAt = car.closedAt.first else { return XCTFail("the car's connection did not close") }
        // Speed+ while the link is down (the first reconnect is 0.5 s away) is ignored, not queued.
        XCTAssertTrue(waitUntil { process.stderr.contains("link down") }, "loss not logged:\n\(process.stderr)")
        terminal.type("+")
        XCTAssertTrue(waitUntil { process.stderr.contains("Speed+ ignored") }, "Speed+ not refused:\n\(process.stderr)")

        // carbridge reconnects by itself (first back-off step is 0.5 s).
        XCTAssertTrue(car.wait(timeout: 3) { $0.connectionCount == 2 },
                      "no reconnect within 3 s:\n\(process.stderr)")
        let reconnectDelay = (car.acceptedAt.last ?? .nan) - droppedAt
        print("LinkLossTests: reconnect delay \(String(format: "%.0f", reconnectDelay * 1000)) ms")
        XCTAssertLessThan(reconnectDelay, 2.0, "reconnect took \(reconnectDelay) s")

        // The handshake first (the car may still run its last command: stop it), then no stale
        // burst and no silent resume: nothing else arrives until the driver acts.
        XCTAssertTrue(car.wait { !$0.received(onConnection: 2).isEmpty }, "no handshake:\n\(process.stderr)")
        // the wait is the test: 0.6 s in which nothing but the handshake may arrive.
        XCTAssertFalse(car.wait(timeout: 0.6) { $0.received(onConnection: 2).count > 1 }, "sent before the driver acted")
        let beforeKey = car.received(onConnection: 2)
        XCTAssertEqual(beforeKey.map(\.text), ["M,0,0,1"],
                       "the new connection must start with the stop frame and nothing else:\n\(process.stderr)")
        if let handshake = beforeKey.first, let accepted = car.acceptedAt.last {
            let latency = handshake.time - accepted
            print("LinkLossTests: handshake \(String(format: "%.1f", latency * 1000)) ms after the reconnect")
            XCTAssertLessThan(latency, 0.1, "the handshake came \(latency) s after the connect")
        }

        let pressedAt = monotonicSeconds()
        terminal.type("+")
        XCTAssertTrue(car.wait { $0.received(onConnection: 2).count >= 4 }, "not streaming after Speed+:\n\(process.stderr)")
        let second = Array(car.received(onConnection: 2).dropFirst())
        XCTAssertEqual(second.first?.text, "M,0,10,1", "S must restart from 0 after a reconnect: \(second.map(\.text))")
        XCTAssertGreaterThanOrEqual(second.first?.time ?? 0, pressedAt, "first frame predates the key press")
        XCTAssertEqual(distinctRuns(second), ["M,0,10,1"])
        XCTAssertGreaterThan(second.count, 2, "not streaming after the new Speed+")

        terminal.type("q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        XCTAssertEqual(car.received.last?.text, "E,0,0,0")
        XCTAssertTrue(process.stderr.contains("link down"), "loss not logged:\n\(process.stderr)")
    }

    func testCarThatIsNotListeningYetIsReachedWithinTheBackoff() throws {
        let port = try unusedLoopbackPort()
        let terminal = try PseudoTerminal()
        let process = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://127.0.0.1:\(port)", "--log-level", "debug", "--no-view"],
            terminal: terminal)
        defer { terminal.closeAll() }
        // Refused attempts at 0, 0.5, 1.5 s…; the car appears after the second (~0.5 s).
        XCTAssertTrue(waitUntil { process.stderr.components(separatedBy: "link down").count > 2 },
                      "not refused twice:\n\(process.stderr)")
        XCTAssertTrue(process.process.isRunning, "carbridge gave up on a refused connection:\n\(process.stderr)")
        let car = try CarListener(port: port)
        defer { car.stop() }
        let appearedAt = monotonicSeconds()
        // Back-off doubles 0.5 → 1 → 2 s at most by now, so the next attempt is within ~2 s.
        XCTAssertTrue(car.wait(timeout: 6) { $0.connectionCount == 1 }, "never connected:\n\(process.stderr)")
        let connectDelay = (car.acceptedAt.first ?? .nan) - appearedAt
        print("LinkLossTests: connected \(String(format: "%.0f", connectDelay * 1000)) ms after the car appeared")
        XCTAssertLessThan(connectDelay, 5.2, "slower than the 5 s back-off ceiling")
        XCTAssertTrue(process.stderr.contains("refused") || process.stderr.contains("link down"),
                      "refusal not reported:\n\(process.stderr)")
        XCTAssertTrue(car.wait { !$0.handshakes.isEmpty }, "no handshake:\n\(process.stderr)")

        terminal.type("e+")
        XCTAssertTrue(car.waitForDrivenRuns(1), "\(car.received.map(\.text))\n\(process.stderr)")
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        XCTAssertEqual(car.driven.first?.text, "M,0,10,1", "\(car.received.map(\.text))")
        terminal.type("q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "E,0,0,0"])
    }
}
