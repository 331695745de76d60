import Foundation
import Glibc
import XCTest

/// `--idle-timeout`: a driver who stops pressing keys gets the engine turned off.
final class IdleTimeoutTests: XCTestCase {
    func testEngineOffArrivesAfterTheIdleTimeoutAndStreamingStops() throws {
        let (car, terminal, process) = try startDriving(["--idle-timeout", "0.5", "--no-view"])
        defer { terminal.closeAll(); car.stop() }

        terminal.type("e+")  // `+` is the last key
        XCTAssertTrue(car.wait(timeout: 3) { $0.driven.contains { $0.text == "E,0,0,0" } },
                      "no engine off after the idle timeout: \(car.received.map(\.text))\n\(process.stderr)")
        // the wait is the test: anything streamed after E,0,0,0 would arrive within 0.4 s.
        XCTAssertFalse(car.wait(timeout: 0.4) { $0.driven.last?.text != "E,0,0,0" }, "streaming went on after engine off")

        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        let lines = car.driven
        XCTAssertEqual(distinctRuns(lines), ["M,0,10,1", "E,0,0,0"])
        XCTAssertEqual(lines.last?.text, "E,0,0,0", "streaming went on after engine off")
        XCTAssertEqual(lines.filter { $0.text == "E,0,0,0" }.count, 1)
        if let speedUp = lines.first, let engineOff = lines.last {
            let stopLatency = engineOff.time - speedUp.time
            print("IdleTimeoutTests: E,0,0,0 \(String(format: "%.0f", stopLatency * 1000)) ms after the last key's frame")
            XCTAssertEqual(stopLatency, 0.5, accuracy: 0.15, "idle timeout fired after \(stopLatency) s")
        }
        XCTAssertGreaterThan(lines.filter { $0.text == "M,0,10,1" }.count, 5, "did not stream until the timeout")

        terminal.type("q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1, "engine off sent twice")
    }
}

/// The keyboard's terminal goes away (ssh drops, the terminal window closes) while the car moves.
final class TerminalLossTests: XCTestCase {
    func testClosingTheTerminalStopsTheCarAndTurnsTheEngineOff() throws {
        let (car, terminal, process) = try startDriving(["--no-view"])
        defer { terminal.closeAll(); car.stop() }
        terminal.type("e++")
        XCTAssertTrue(car.waitForDrivenRuns(2), "\(car.received.map(\.text))\n\(process.stderr)")
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "M,0,20,1"])

        terminal.closeMaster()
        let closedAt = monotonicSeconds()
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        let lines = car.driven
        // Input lost → the stop frame at once, then the exit's engine off.
        XCTAssertEqual(distinctRuns(lines), ["M,0,10,1", "M,0,20,1", "M,0,0,1", "E,0,0,0"],
                       "\(lines.map(\.text))\n\(process.stderr)")
        if let stop = lines.first(where: { $0.text == "M,0,0,1" }) {
            let latency = stop.time - closedAt
            print("TerminalLossTests: stop frame \(String(format: "%.1f", latency * 1000)) ms after the terminal closed")
            XCTAssertLessThan(latency, 0.5)
        }
        XCTAssertEqual(lines.filter { $0.text == "E,0,0,0" }.count, 1)
    }
}
