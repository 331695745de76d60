import Foundation
import XCTest

/// `carbridge run --config config/wheel.toml --replay FILE`: a Logitech G29 session (the wheel through its
/// lock, the gas with a foot's noise, the brake, a paddle, the Options button), written from the kernel's
/// description of the wheel, drives a real carbridge with the shipped config; a listening socket checks the
/// exact frames.
final class WheelReplayTests: XCTestCase {
    private var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private func replay(_ recording: String) throws -> (CarListener, CarbridgeProcess, Int32?) {
        let car = try CarListener()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(recording).path
        let process = try CarbridgeProcess(
            arguments: ["run", "--config", repositoryRoot.appendingPathComponent("config/wheel.toml").path,
                        "--replay", fixture, "--link", "tcp://127.0.0.1:\(car.port)", "--no-keyboard",
                        "--log-level", "debug"],
            terminal: nil)
        let status = process.waitForExit(timeout: 15)
        car.wait(timeout: 2) { $0.closedCount >= $0.connectionCount }
        car.stop()
        return (car, process, status)
    }

    func testAG29SessionDrivesWithTheShippedConfig() throws {
        let (car, process, status) = try replay("g29-wheel-session.evemu")
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        // Options: engine on · ✕: F1 · gas 200 (50) then 150 (90) · the wheel at 30° (θ 30, A 1), 75° (A 2), centre,
        // 40° left (A −1) · the brake: the stop frame · brake released with the gas down, gas lifted: nothing ·
        // right paddle: Gear, its frame · gas 200 backwards (50) · centre · gas lifted: the stop frame · Options off.
        XCTAssertEqual(distinctRuns(car.driven), [
            "F,0,0,1",
            "M,0,50,1", "M,0,90,1",
            "R,1,90,1", "R,2,90,1", "M,0,90,1", "L,-1,90,1",
            "L,-1,0,1",
            "X,-1,0,0",
            "X,-1,50,0", "B,0,50,0",
            "B,0,0,0",
            "E,0,0,0",
        ], "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        XCTAssertEqual(car.received.filter { $0.text == "L,-1,0,1" }.count, 1, "the brake's stop frame is not streamed")
        XCTAssertEqual(car.received.filter { $0.text == "B,0,0,0" }.count, 1)
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1)
        // The gas held at 90 with ±2 raw of noise for 0.3 s (0.70 to 1.00 s of the recording): the 50 ms stream
        // and nothing more.
        let texts = car.received.map(\.text)
        if let first = texts.firstIndex(of: "M,0,90,1"), let turned = texts.firstIndex(of: "R,1,90,1") {
            XCTAssertLessThanOrEqual(turned - first, 7, "frames at 90 before the wheel turned: \(texts[first..<turned])")
        } else {
            XCTFail("no M,0,90,1 or R,1,90,1: \(texts)")
        }
    }
}
