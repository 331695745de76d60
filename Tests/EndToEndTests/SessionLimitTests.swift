import Foundation
import Glibc
import XCTest

/// `kiosk.session_limit_s` with the real binary and a TCP car: the turn ends at the limit with the
/// stop frame and `E,0,0,0`, and the next Engine press starts a new turn.
final class SessionLimitEndToEndTests: XCTestCase {
    func testTheTurnEndsAtTheLimitAndTheNextEnginePressStartsANewOne() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-kiosk-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("kiosk.toml")
        try "[kiosk]\nsession_limit_s = 1.5\n".write(to: config, atomically: true, encoding: .utf8)

        let (car, terminal, process) = try startDriving(["--config", config.path, "--no-view"])
        defer { terminal.closeAll(); car.stop() }
        XCTAssertEqual(car.handshakes, ["E,0,0,0"], process.stderr)

        // First turn: engine on, S = 20, then hands off the keys.
        terminal.type("e++")
        let firstTurn = monotonicSeconds()
        XCTAssertTrue(car.wait(timeout: 4) { $0.driven.contains { $0.text == "E,0,0,0" } },
                      "the turn did not end: \(distinctRuns(car.driven))\n\(process.stderr)")
        // the wait is the test: anything streamed after E,0,0,0 would arrive within 0.5 s.
        XCTAssertFalse(car.wait(timeout: 0.5) { $0.driven.last?.text != "E,0,0,0" }, "frames after the engine went off")
        let lines = car.driven
        XCTAssertEqual(distinctRuns(lines), ["M,0,10,1", "M,0,20,1", "M,0,0,1", "E,0,0,0"])
        XCTAssertEqual(lines.last?.text, "E,0,0,0", "frames after the engine went off")
        if let stop = lines.first(where: { $0.text == "M,0,0,1" }), let off = lines.last {
            print("SessionLimitEndToEndTests: stop frame \(String(format: "%.0f", (stop.time - firstTurn) * 1000)) ms after Engine (limit 1500 ms), E,0,0,0 \(String(format: "%.1f", (off.time - stop.time) * 1000)) ms after it")
            XCTAssertEqual(stop.time - firstTurn, 1.5, accuracy: 0.2)
            XCTAssertLessThan(off.time - stop.time, 0.05)
        }
        XCTAssertTrue(process.stderr.contains("session limit (1.5 s): engine off"), process.stderr)

        // Speed+ with the engine off does nothing; the next Engine press starts a new full turn. The
        // keys are read in order: when the new turn's M,0,10,1 arrives, the first `+` was handled.
        terminal.type("+e+")
        let secondTurn = monotonicSeconds()
        XCTAssertTrue(car.wait(timeout: 2) { $0.driven.count > lines.count }, process.stderr)
        XCTAssertEqual(car.driven.dropFirst(lines.count).first?.text, "M,0,10,1",
                       "Speed+ moved the car with the engine off, or the new turn did not start")
        XCTAssertTrue(car.wait(timeout: 3) { $0.driven.filter { $0.text == "E,0,0,0" }.count == 2 }, process.stderr)
        let second = Array(car.driven.dropFirst(lines.count))
        XCTAssertEqual(distinctRuns(second), ["M,0,10,1", "M,0,0,1", "E,0,0,0"])
        if let off = second.last { XCTAssertEqual(off.time - secondTurn, 1.5, accuracy: 0.2, "the second turn ended early or late") }

        terminal.type("q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
    }
}
