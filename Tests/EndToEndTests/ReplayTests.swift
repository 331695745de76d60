import Foundation
import Glibc
import XCTest

/// `carbridge run --replay FILE`: an evemu recording of an Xbox-style pad drives a real carbridge
/// (default button map) and a listening socket checks the exact frames.
final class ReplayTests: XCTestCase {
    /// Fixtures live next to this file (excluded from the target: read by path, not bundled).
    private func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent(name).path
    }

    private func replay(_ path: String) throws -> (CarListener, CarbridgeProcess, Int32?) {
        let car = try CarListener()
        let process = try CarbridgeProcess(
            arguments: ["run", "--replay", path, "--link", "tcp://127.0.0.1:\(car.port)", "--no-keyboard",
                        "--log-level", "debug"],
            terminal: nil)
        let status = process.waitForExit(timeout: 10)
        car.wait(timeout: 2) { $0.closedCount >= $0.connectionCount }
        car.stop()
        return (car, process, status)
    }

    func testRecordedDriveSessionSendsTheSpecFrames() throws {
        let (car, process, status) = try replay(fixture("xbox-drive-session.evemu"))
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertEqual(car.connectionCount, 1)
        // BTN_START engine on (nothing sent) · BTN_TR ×3 · ABS_X 30000 (θ≈81° → A=2) then 32767 (θ=90, A stays 2)
        // · BTN_EAST F2 (its own frame, then the stream resumes) · the Y button gear · BTN_TL ×3 · BTN_START off.
        // The pad has a GameControllerDB entry, so its buttons are where they are on the pad: xpad sends the
        // Y button as BTN_Y (0x134, the kernel's BTN_WEST), which the DB's y:b3 makes the north button.
        // The replay ends with the engine off: input lost and shutdown send nothing more.
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        XCTAssertEqual(distinctRuns(car.driven), [
            "M,0,10,1", "M,0,20,1", "M,0,30,1",
            "R,2,30,1",
            "G,2,30,1",
            "R,2,30,1",
            "Y,2,30,0",
            "Y,2,20,0", "Y,2,10,0", "Y,2,0,0",
            "E,0,0,0",
        ], "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        XCTAssertEqual(car.received.filter { $0.text == "G,2,30,1" }.count, 1, "an F-key frame is never streamed")
        XCTAssertEqual(car.received.filter { $0.text == "Y,2,0,0" }.count, 1, "streamed at S=0")
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1)
        // The recording's timing is kept: M,0,30,1 streams from 0.95 s to 1.25 s of the recording.
        let streamedAt30 = car.received.filter { $0.text == "M,0,30,1" }.count
        XCTAssertTrue((3...9).contains(streamedAt30), "\(streamedAt30) × M,0,30,1 in ~300 ms")
    }

    func testRecordingThatEndsWhileMovingStopsTheCarThenTurnsTheEngineOff() throws {
        let (car, process, status) = try replay(fixture("xbox-ends-while-moving.evemu"))
        XCTAssertEqual(status, 0, process.stderr)
        // Input lost (the replay ended) → the stop frame, then shutdown → E,0,0,0.
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "M,0,20,1", "M,0,0,1", "E,0,0,0"],
                       "received: \(car.received.map(\.text))\nstderr:\n\(process.stderr)")
        XCTAssertEqual(car.received.last?.text, "E,0,0,0")
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1)
        // The first BTN_TR (0.45 s) and the recording's last event (0.9 s) are 450 ms apart: the stop
        // frame follows the end of the recording at once.
        if let first = car.driven.first, let stop = car.driven.first(where: { $0.text == "M,0,0,1" }) {
            let afterFirstFrame = stop.time - first.time
            print("ReplayTests: stop frame \(String(format: "%.0f", afterFirstFrame * 1000)) ms after the first frame (recording: 450 ms)")
            XCTAssertEqual(afterFirstFrame, 0.45, accuracy: 0.15)
        }
    }

    func testMalformedRecordingExitsOneWithFileAndLine() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-replay-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("broken.evemu").path
        let text = """
            # EVEMU 1.3
            N: Broken pad
            I: 0003 045e 028e 0114
            A: 00 -32768 32767 16 128 0
            E: 0.000001 0001 013b 0001
            E: 0.000001 0000 0000 0000
            E: 0.10x 0001 013b 0000

            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)

        let (car, process, status) = try replay(path)
        XCTAssertEqual(status, 1, process.stderr)
        XCTAssertTrue(process.stderr.contains("\(path):7"), "no file:line in:\n\(process.stderr)")
        XCTAssertEqual(car.received.map(\.text), [], "a broken recording must not drive")
    }
}
