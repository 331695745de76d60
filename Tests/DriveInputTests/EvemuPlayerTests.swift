import DriveCore
import DriveInputModel
import DriveMapping
import DriveSystem
import XCTest

@testable import DriveInput

/// The replays run on a manual clock: frames are delivered exactly at their due instants and the
/// recordings' 200 ms take no wall time.
final class EvemuPlayerTests: XCTestCase {
    func testReplaysFramesInOrderWithTheirRecordedRelativeTiming() throws {
        let loop = try EventLoop(clock: .manual)
        let recording = try EvemuRecording.parse(try TestSupport.fixtureText("xbox360-pad.evemu"))
        let player = EvemuPlayer(recording: recording, loop: loop)
        var frames: [InputFrame] = []
        var deliveredAt: [Instant] = []
        var events = 0
        var finished = 0
        player.onEvent = { _ in events += 1 }
        player.onFrame = {
            frames.append($0)
            deliveredAt.append(loop.now())
        }
        player.onFinished = { finished += 1 }
        let start = loop.now()
        player.start(at: start)
        try TestSupport.run(loop, seconds: 3) { finished > 0 }

        XCTAssertEqual(finished, 1)
        XCTAssertTrue(player.isFinished)
        XCTAssertEqual(events, 17)
        XCTAssertEqual(frames.count, 6)
        let offsetsMicroseconds = frames.map { $0.time.duration(since: start).nanoseconds / 1000 }
        XCTAssertEqual(offsetsMicroseconds, [0, 15_999, 47_999, 99_999, 149_999, 199_999])
        XCTAssertEqual(deliveredAt, frames.map(\.time), "each frame delivered exactly when it is due")
        XCTAssertEqual(frames[1].axes.map(\.raw), [20000], "two ABS_X in one report coalesce")
        XCTAssertEqual(frames[2].keys, [KeyChange(code: 0x130, pressed: true)])
        XCTAssertEqual(frames[3].axes, [AxisValue(code: 5, value: 1, raw: 255), AxisValue(code: 16, value: -1, raw: -1)])
        XCTAssertEqual(frames[4].keys, [KeyChange(code: 0x130, pressed: false), KeyChange(code: 0x13b, pressed: true)])
        XCTAssertEqual(frames[5].axes.first?.value, 1)
        XCTAssertEqual(player.dueInstant(ofEvent: 3), start.advanced(by: .microseconds(15_999)))
    }

    func testAccelerometerReplayProducesAcceleration() throws {
        let loop = try EventLoop(clock: .manual)
        let recording = try EvemuRecording.parse(try TestSupport.fixtureText("dualsense-motion.evemu"))
        let player = EvemuPlayer(recording: recording, loop: loop)
        var frames: [InputFrame] = []
        player.onFrame = { frames.append($0) }
        var finished = false
        player.onFinished = { finished = true }
        player.start()
        try TestSupport.run(loop) { finished }
        XCTAssertEqual(frames.count, 2)
        XCTAssertEqual(frames.first?.acceleration?.y ?? 0, 9.80665, accuracy: 1e-9)
        XCTAssertEqual(frames.last?.acceleration?.x ?? 0, -9.80665 / 2, accuracy: 1e-9)
        XCTAssertEqual(frames.last?.acceleration?.y ?? 0, 9.80665, accuracy: 1e-9, "unchanged axes keep their last value")
    }

    func testStopFromACallbackEndsThePlayback() throws {
        let loop = try EventLoop(clock: .manual)
        let recording = try EvemuRecording.parse(try TestSupport.fixtureText("xbox360-pad.evemu"))
        let player = EvemuPlayer(recording: recording, loop: loop)
        var frames = 0
        var finished = false
        player.onFrame = { _ in
            frames += 1
            if frames == 2 { player.stop() }
        }
        player.onFinished = { finished = true }
        player.start()
        try TestSupport.run(loop, seconds: 0.4) { false }
        XCTAssertEqual(frames, 2)
        XCTAssertFalse(finished)
    }

    func testEmptyRecordingFinishesAtOnce() throws {
        let loop = try EventLoop(clock: .manual)
        let player = EvemuPlayer(recording: try EvemuRecording.parse("N: nothing\nI: 0000 0000 0000 0000\n"), loop: loop)
        var finished = 0
        player.onFinished = { finished += 1 }
        player.start()
        XCTAssertEqual(finished, 1)
    }

    /// Regression: events whose timestamps are far apart (a recording built directly, not range-checked by
    /// the parser) trapped on the checked subtraction after `timeMicroseconds` wrapped; now the offsets saturate.
    func testFarApartTimestampsSaturateInsteadOfTrapping() throws {
        let loop = try EventLoop(clock: .manual)
        let events = [
            InputEvent(seconds: 1, microseconds: 0, type: 3, code: 0, value: 5),
            InputEvent(seconds: 9_223_372_036_855, microseconds: 0, type: 3, code: 0, value: 100),
            InputEvent(seconds: -9_223_372_036_855, microseconds: 0, type: 0, code: 0, value: 0),
        ]
        let recording = EvemuRecording(info: InputDeviceInfo(name: "pad"), events: events, eventLines: [3, 4, 5])
        XCTAssertGreaterThanOrEqual(recording.durationMicroseconds, 0)
        let player = EvemuPlayer(recording: recording, loop: loop)
        var played = 0
        player.onEvent = { _ in played += 1 }
        player.start(at: Instant(nanoseconds: 1_000_000_000))
        XCTAssertEqual(player.dueInstant(ofEvent: 0), Instant(nanoseconds: 1_000_000_000))
        let far = try XCTUnwrap(player.dueInstant(ofEvent: 1))
        XCTAssertEqual(far, Instant(nanoseconds: Int64.max), "saturated at the end of the clock, not wrapped into the past")
        XCTAssertEqual(player.dueInstant(ofEvent: 2), far, "never earlier than the event before")
        try TestSupport.run(loop, seconds: 0.05) { false }
        XCTAssertEqual(played, 1, "only the first event is due; the far one is not played early")
        player.stop()
    }
}
