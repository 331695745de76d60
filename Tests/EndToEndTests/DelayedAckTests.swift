import Foundation
import Glibc
import XCTest

/// The kernel-queue rule against a car whose TCP stack delays its ACKs the way lwIP does on an
/// ESP8266 Wi-Fi car (an ACK when a second segment has arrived, else after 250 ms), emulated by
/// `Tests/tools/delayline.py` between two network namespaces. The 50 ms stream must still reach
/// the car at its rate with the default `max_in_flight = 2`; with 1 it would not (which also
/// shows the emulation really delays the ACKs). Needs root (CI is root).
final class DelayedAckTests: XCTestCase {
    /// Streams at S=50 for 3 s through the lwIP-like wire; returns the median interval (ms) and
    /// the number of stream frames the car got.
    private func streamThroughLwIPWire(maxInFlight: Int?) throws -> (median: Double, frames: Int) {
        try TestNetwork.requireRoot()
        let network = try TestNetwork(wire: true)
        defer { network.tearDown() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tools/delayline.py").path
        let wire = Process()
        wire.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        wire.arguments = ["netns", "exec", network.wireNamespace!, "/usr/bin/python3", script,
                          "--host-if", network.wireHostInterface, "--car-if", network.wireCarInterface, "--lwip"]
        let wireOutput = Pipe()
        wire.standardOutput = wireOutput
        try wire.run()
        defer { wire.terminate(); wire.waitUntilExit() }
        let ready = wireOutput.fileHandleForReading.availableData
        XCTAssertTrue(String(decoding: ready, as: UTF8.self).contains("ready"), "the wire did not start")

        let car = try CarListener(host: network.carAddress, namespace: network.name)
        defer { car.stop() }
        var arguments = ["run", "--link", "tcp://\(network.carAddress):\(car.port)", "--no-view"]
        if let maxInFlight {
            let config = FileManager.default.temporaryDirectory
                .appendingPathComponent("carbridge-delack-\(getpid())-\(maxInFlight).toml")
            try "[link]\nmax_in_flight = \(maxInFlight)\n".write(to: config, atomically: true, encoding: .utf8)
            arguments += ["--config", config.path]
        }
        let terminal = try PseudoTerminal()
        defer { terminal.closeAll() }
        let process = try CarbridgeProcess(arguments: arguments, terminal: terminal)
        defer { if process.process.isRunning { process.signal(SIGKILL) } }
        XCTAssertTrue(car.wait { $0.connectionCount == 1 && !$0.handshakes.isEmpty }, "never connected:\n\(process.stderr)")
        terminal.type("e+++++")  // engine on, S = 50: streaming
        XCTAssertTrue(car.wait { $0.driven.last?.text == "M,0,50,1" }, "\(car.received.map(\.text))")
        // Until 60 stream frames (3 s at the stream's 50 ms) arrived, or 3 s passed.
        let start = monotonicSeconds()
        let arrived = { car.driven.filter { $0.text == "M,0,50,1" && $0.time >= start } }
        car.wait(timeout: 3) { _ in arrived().count >= 60 }
        let streamed = arrived()
        process.signal(SIGTERM)
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        return (median(streamIntervals(streamed)), streamed.count)
    }

    func testTheStreamKeepsItsRateWithTheDefaultMaxInFlight() throws {
        let result = try streamThroughLwIPWire(maxInFlight: nil)
        print(String(format: "DelayedAckTests: lwIP-like ACKs, max_in_flight 2: median %.1f ms, %d frames in 3 s",
                     result.median, result.frames))
        XCTAssertEqual(result.median, 50, accuracy: 8, "the 50 ms stream must reach the car at its rate")
        XCTAssertGreaterThan(result.frames, 50)
    }

    func testOneFrameInFlightWouldWaitForTheDelayedAck() throws {
        let result = try streamThroughLwIPWire(maxInFlight: 1)
        print(String(format: "DelayedAckTests: lwIP-like ACKs, max_in_flight 1: median %.1f ms, %d frames in 3 s",
                     result.median, result.frames))
        XCTAssertGreaterThan(result.median, 150, "with 1 in flight every frame waits for lwIP's 250 ms ACK timer")
    }
}
