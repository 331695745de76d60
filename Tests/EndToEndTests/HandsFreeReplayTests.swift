import Foundation
import XCTest

/// `carbridge run --config … --replay FILE`: evemu recordings of a hands-free board session and of a
/// tilt-throttle session drive a real carbridge; a listening socket checks the exact frames. Nobody
/// presses anything: arming, speed, steering and the stop all come from the body's lean and weight.
final class HandsFreeReplayTests: XCTestCase {
    private func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(name).path
    }

    private func replay(_ recording: String, config: String) throws -> (CarListener, CarbridgeProcess, Int32?) {
        let car = try CarListener()
        let process = try CarbridgeProcess(
            arguments: ["run", "--config", fixture(config), "--replay", fixture(recording),
                        "--link", "tcp://127.0.0.1:\(car.port)", "--no-keyboard", "--log-level", "debug"],
            terminal: nil)
        let status = process.waitForExit(timeout: 15)
        car.wait(timeout: 2) { $0.closedCount >= $0.connectionCount }
        car.stop()
        return (car, process, status)
    }

    func testBoardSessionArmsDrivesSteersAndStopsWhenTheRiderStepsOff() throws {
        let (car, process, status) = try replay("board-handsfree-session.evemu", config: "handsfree-board-replay.toml")
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        // 60 kg on at 0.1 s, swaying inside the dead zone → armed at 2.1 s (engine on: nothing sent) · lean
        // forward (CoP y 0.3) → 120 · lean left (CoP x −0.3 → θ −45°, A −1) · step off at speed → the stop
        // frame · the empty board (under 1 kg) centres the steering (A 0: the stop frame's letter changes) ·
        // engine off 0.5 s after the step-off. The end of the replay with the engine off sends nothing more.
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,120,1", "L,-1,120,1", "L,-1,0,1", "M,0,0,1", "E,0,0,0"],
                       "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        XCTAssertEqual(car.driven.filter { $0.text == "L,-1,0,1" }.count, 1, "one stop frame, no stream at S = 0")
        if let lean = car.driven.first, let stop = car.driven.first(where: { $0.text == "L,-1,0,1" }),
           let off = car.driven.last, off.text == "E,0,0,0" {
            // The recording: lean forward at 2.5 s, step off at 3.0 s, engine off due at 3.5 s.
            XCTAssertEqual(stop.time - lean.time, 0.5, accuracy: 0.15)
            XCTAssertEqual(off.time - stop.time, 0.5, accuracy: 0.15)
        }
    }

    func testABoardLeanHoveringOnAStepBoundaryWithNoiseSendsOnlyTheStream() throws {
        let (car, process, status) = try replay(
            "board-lean-at-boundary.evemu", config: "handsfree-board-boundary-replay.toml")
        XCTAssertEqual(status, 0, process.stderr)
        // 4.2 s of reports every 50 ms with each cell ±3 units, first at 0.30 of full scale, then on the 60/70
        // boundary itself: one speed, streamed, then the step-off's stop frame and the engine off.
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,60,1", "M,0,0,1", "E,0,0,0"],
                       "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        let moving = car.driven.filter { $0.text == "M,0,60,1" }
        if let first = moving.first, let stop = car.driven.first(where: { $0.text == "M,0,0,1" }) {
            // The stream alone: one frame per 50 ms period from the lean to the step-off (84 in 4.2 s).
            let periods = (stop.time - first.time) / 0.05
            XCTAssertLessThanOrEqual(Double(moving.count), periods.rounded() + 2, "\(moving.count) frames in \(periods) periods")
            XCTAssertGreaterThanOrEqual(Double(moving.count), periods.rounded() - 2)
        }
    }

    func testTiltSessionPitchIsTheThrottle() throws {
        let (car, process, status) = try replay("tilt-throttle-session.evemu", config: "handsfree-tilt-replay.toml")
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        // Level for 1 s (arm_tilt) → engine on · pitch 15° → 120 · roll −30° → L · pitch −15° (sit up) → the stop
        // frame; the end of the replay is lost input (the stop frame again, collapsed here), then E,0,0,0.
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,120,1", "L,-1,120,1", "L,-1,0,1", "E,0,0,0"],
                       "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1)
    }
}
