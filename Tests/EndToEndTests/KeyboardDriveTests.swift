import Foundation
import Glibc
import XCTest

/// Presses keys at a real `carbridge run --link tcp://…` through a pty and checks the exact
/// frames a listening socket receives.
final class KeyboardDriveTests: XCTestCase {
    func testKeysDriveTheSpecFramesAndStreamEvery50ms() throws {
        let (car, terminal, process) = try startDriving()
        defer { terminal.closeAll(); car.stop() }

        press(terminal, "g")                    // engine off: ignored, nothing sent
        press(terminal, "e")                    // engine on: nothing sent by itself
        XCTAssertEqual(car.received.map(\.text), ["E,0,0,0"], "only the handshake (engine off) on connect")
        press(terminal, "1")                    // F1 at A=0 S=0 D=1
        press(terminal, "+")
        press(terminal, "+")
        press(terminal, "+")
        press(terminal, "+", pause: 400_000)   // S=40: streaming
        press(terminal, "\u{1B}[C", pause: 300_000)  // right 20° → A=1
        press(terminal, "\u{1B}[C", pause: 300_000)  // 40° → still A=1: no event
        press(terminal, "\u{1B}[C", pause: 300_000)  // 60° → still A=1 (60 is inside range 1)
        press(terminal, "\u{1B}[C", pause: 300_000)  // 80° → A=2
        press(terminal, "2")                     // F2
        press(terminal, "g", pause: 300_000)     // reverse
        press(terminal, "c", pause: 300_000)     // centre → A=0
        // Speed− ×4 typed in one burst: the kernel takes at most max_in_flight (2) motion frames
        // before the car acknowledges them, so intermediate speeds may be coalesced away (protocol
        // §5.6: the newest state wins); the final S=0 frame always arrives.
        press(terminal, "----", pause: 400_000)  // down to 0: streaming stops
        press(terminal, "e", pause: 300_000)     // engine off
        press(terminal, "+")                     // ignored: engine off
        press(terminal, "q")
        let status = process.waitForExit()
        XCTAssertEqual(status, 0, process.stderr)

        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        let runs = distinctRuns(car.driven)
        XCTAssertEqual(runs, [
            "F,0,0,1",
            "M,0,10,1", "M,0,20,1", "M,0,30,1", "M,0,40,1",
            "R,1,40,1", "R,2,40,1",
            "G,2,40,1",
            "R,2,40,1",
            "Y,2,40,0", "B,0,40,0",
            "B,0,30,0", "B,0,20,0", "B,0,10,0", "B,0,0,0",
            "E,0,0,0",
        ].filter { runs.contains($0) || !["B,0,30,0", "B,0,20,0", "B,0,10,0"].contains($0) },
        "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        XCTAssertEqual(car.received.last?.text, "E,0,0,0")
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1)
        // Nothing is streamed at S=0.
        XCTAssertEqual(car.received.filter { $0.text == "B,0,0,0" }.count, 1)

        let intervals = streamIntervals(car.received)
        XCTAssertGreaterThan(intervals.count, 30, "too few stream frames: \(car.received.map(\.text))")
        let p50 = median(intervals)
        XCTAssertEqual(p50, 50, accuracy: 8, "median stream interval \(p50) ms")
        // The view was drawn on the terminal.
        XCTAssertTrue(terminal.text.contains("Engine"), "no live view drawn")
    }

    func testSigtermWhileMovingSendsEngineOffAndExitsZero() throws {
        let (car, terminal, process) = try startDriving()
        defer { terminal.closeAll(); car.stop() }
        press(terminal, "e")
        press(terminal, "++", pause: 300_000)
        process.signal(SIGTERM)
        let status = process.waitForExit()
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertTrue(car.wait { $0.closedCount == 1 }, "connection not closed")
        let texts = car.received.map(\.text)
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "M,0,20,1", "E,0,0,0"], "\(texts)")
        XCTAssertEqual(texts.last, "E,0,0,0")
    }

    func testSigintWithEngineOffSendsNothingButTheHandshake() throws {
        let (car, terminal, process) = try startDriving()
        defer { terminal.closeAll(); car.stop() }
        process.signal(SIGINT)
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        XCTAssertEqual(car.received.map(\.text), ["E,0,0,0"])
    }

    func testTerminalIsRestoredAfterExit() throws {
        let (car, terminal, process) = try startDriving()
        defer { terminal.closeAll(); car.stop() }
        press(terminal, "q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        var mode = termios()
        XCTAssertEqual(tcgetattr(terminal.slave, &mode), 0)
        XCTAssertNotEqual(mode.c_lflag & tcflag_t(ICANON), 0, "canonical mode not restored")
        XCTAssertNotEqual(mode.c_lflag & tcflag_t(ECHO), 0, "echo not restored")
    }
}
