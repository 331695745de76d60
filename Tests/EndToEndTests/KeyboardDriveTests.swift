import Foundation
import Glibc
import XCTest

/// Presses keys at a real `carbridge run --link tcp://…` through a pty and checks the exact
/// frames a listening socket receives.
final class KeyboardDriveTests: XCTestCase {
    func testKeysDriveTheSpecFramesAndStreamEvery50ms() throws {
        let (car, terminal, process) = try startDriving()
        defer { terminal.closeAll(); car.stop() }

        // Keys are read in order, so a key's frame arriving shows every earlier key was handled; the
        // stream is waited for frame by frame (its intervals are measured below).
        terminal.type("g")                     // engine off: ignored, nothing sent
        terminal.type("e")                     // engine on: nothing sent by itself
        terminal.type("1")                     // F1 at A=0 S=0 D=1
        XCTAssertTrue(car.wait { $0.received.count >= 2 }, "nothing after F1:\n\(process.stderr)")
        XCTAssertEqual(car.received.map(\.text), ["E,0,0,0", "F,0,0,1"],
                       "only the handshake (engine off) on connect, nothing for g and e")
        terminal.type("++++")
        XCTAssertTrue(car.waitForStream("M,0,40,1", count: 10), "S=40 not streaming: \(distinctRuns(car.received))")
        terminal.type("\u{1B}[C")              // right 20° → A=1
        XCTAssertTrue(car.waitForStream("R,1,40,1", count: 7), "\(distinctRuns(car.received))")
        terminal.type("\u{1B}[C")              // 40° → still A=1: no event
        terminal.type("\u{1B}[C")              // 60° → still A=1 (60 is inside range 1)
        terminal.type("\u{1B}[C")              // 80° → A=2
        XCTAssertTrue(car.waitForStream("R,2,40,1", count: 7), "\(distinctRuns(car.received))")
        terminal.type("2")                     // F2
        XCTAssertTrue(car.wait { $0.received.contains { $0.text == "G,2,40,1" } }, "\(distinctRuns(car.received))")
        XCTAssertTrue(car.waitForStream("R,2,40,1", count: 2), "\(distinctRuns(car.received))")
        terminal.type("g")                     // reverse
        XCTAssertTrue(car.waitForStream("Y,2,40,0", count: 7), "\(distinctRuns(car.received))")
        terminal.type("c")                     // centre → A=0
        XCTAssertTrue(car.waitForStream("B,0,40,0", count: 7), "\(distinctRuns(car.received))")
        // Speed− ×4 typed in one burst: the kernel takes at most max_in_flight (2) motion frames
        // before the car acknowledges them, so intermediate speeds may be coalesced away (protocol
        // §5.6: the newest state wins); the final S=0 frame always arrives.
        terminal.type("----")                  // down to 0: streaming stops
        XCTAssertTrue(car.wait { $0.received.last?.text == "B,0,0,0" }, "\(distinctRuns(car.received))")
        terminal.type("e")                     // engine off
        terminal.type("+")                     // ignored: engine off
        terminal.type("q")
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
        terminal.type("e++")
        XCTAssertTrue(car.waitForDrivenRuns(2), "\(car.received.map(\.text))")
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
        terminal.type("q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        var mode = termios()
        XCTAssertEqual(tcgetattr(terminal.slave, &mode), 0)
        XCTAssertNotEqual(mode.c_lflag & tcflag_t(ICANON), 0, "canonical mode not restored")
        XCTAssertNotEqual(mode.c_lflag & tcflag_t(ECHO), 0, "echo not restored")
    }
}
