import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Foundation
import Logging
import XCTest

/// An input source the test drives by hand, on the loop: frames and its loss.
private final class HandDrivenSource: InputSource {
    let description: String
    var onFrame: ((InputFrame) -> Void)?
    var onGone: ((String) -> Void)?
    init(_ description: String) { self.description = description }
    func start() throws {}
    func stop() {}

    /// A tilt rig sample: gravity pitched `pitch` degrees about x (over y,z) and rolled `roll` about y (over x,z).
    func tilt(pitch: Double, roll: Double = 0, at time: Instant) {
        let z = 9.81
        onFrame?(InputFrame(
            time: time,
            acceleration: Vector3(x: z * tan(roll * .pi / 180), y: z * tan(pitch * .pi / 180), z: z)))
    }

    /// Four balance-board cells (kg) spread so the centre of pressure is (`x`, `y`), in hid-wiimote's 10 g units.
    func stand(_ kilograms: Double, x: Double = 0, y: Double = 0, at time: Instant) {
        let w = kilograms
        let cells = [(16, w * (1 + x + y) / 4), (17, w * (1 + x - y) / 4), (18, w * (1 - x + y) / 4), (19, w * (1 - x - y) / 4)]
        onFrame?(InputFrame(time: time, axes: cells.map { AxisValue(code: UInt16($0.0), value: 0, raw: Int32(($0.1 * 100).rounded())) }))
    }

    /// A pad's right trigger (`ABS_RZ`) at `value`, 0…1.
    func trigger(_ value: Double, at time: Instant) {
        onFrame?(InputFrame(time: time, axes: [AxisValue(code: 5, value: value, raw: Int32((value * 255).rounded()))]))
    }

    func disappear(_ reason: String) { onGone?(reason) }
}

/// Keeps the messages logged through it, for the tests that read the log.
private final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var all: [String] { lock.withLock { lines } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }
}

private struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { lines.append("\(event.level): \(event.message)") }
}

/// Hands-free through the real runtime path (InputCoordinator → ControlMapper → Bridge) on a manual
/// clock, the parts of issue 16's test list the board's `HandsFreeBridgeTests` does not cover: a tilt rig
/// held level arms at exactly `arm_after_s` and a wobble restarts the count; leaning back at speed sends
/// the stop frame in the same loop turn; a rig that falls silent stops the car at exactly
/// `input_timeout_ms` (the same watchdog as tilt steering); a board that disconnects is lost input;
/// a board wobble past the dead zone restarts the count.
final class HandsFreeTiltBridgeTests: XCTestCase {
    private var loop: EventLoop!
    private var link: RecordingCarLink!
    private var bridge: Bridge!
    private var inputs: InputCoordinator!
    private var source: HandDrivenSource!
    private let log = LogLines()

    override func tearDown() {
        inputs?.stop()
        inputs = nil
        bridge = nil
        link = nil
        loop = nil
    }

    /// The runtime wired as `InputService` wires it, with `source` attached as `role`; the handshake is forgotten.
    private func start(_ configText: String, role: DeviceRole) throws {
        loop = try makeManualLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "handsfree-tilt-test") { [log] _ in CapturingLogHandler(lines: log) }
        let config = try CarbridgeConfig.parse(text: configText, file: "handsfree.toml", resolver: EventCodeNames())
        bridge = Bridge(settings: config.drive, link: link, loop: loop, logger: logger)
        bridge.start()
        link.set(.up)
        XCTAssertEqual(link.texts, ["E,0,0,0"])
        link.forgetFrames()
        inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        inputs.onControl = { [weak bridge] control in bridge?.apply(control) }
        bridge.events.subscribe(inputs)
        source = HandDrivenSource(role == .board ? "fake board" : "fake tilt rig")
        try inputs.attach(source, role: role, name: source.description)
    }

    private let tiltRig = """
        [drive]
        max_speed = 120
        [steering]
        source = "tilt"
        smoothing_ms = 0
        input_timeout_ms = 500
        [throttle]
        source = "tilt"
        pitch_axes = "y,z"
        deadzone_deg = 6
        full_deg = 26
        [handsfree]
        arm_tilt = true
        arm_after_s = 2
        """

    /// Samples every 20 ms at `pitch` from now for `duration`; returns the instant after the last.
    private func hold(pitch: Double, roll: Double = 0, for duration: Duration) throws {
        let end = loop.now().advanced(by: duration)
        while loop.now() < end {
            source.tilt(pitch: pitch, roll: roll, at: loop.now())
            try DriveTestSupport.run(loop, for: .milliseconds(20))
        }
    }

    func testATiltRigHeldLevelArmsAtTwoSecondsAndAWobbleRestartsTheCount() throws {
        try start(tiltRig, role: .accelerometer)
        let level = loop.now()
        try hold(pitch: 0, for: .milliseconds(1500))
        try hold(pitch: 10, for: .milliseconds(40))  // a wobble past the 6° dead zone
        let again = loop.now()
        try hold(pitch: 1, roll: -2, for: .milliseconds(1980))
        XCTAssertFalse(bridge.state.engineOn, "1.98 s after the wobble (3.5 s after the first level sample): not armed")
        XCTAssertGreaterThan(loop.now().duration(since: level), .seconds(2))
        try hold(pitch: 1, roll: -2, for: .milliseconds(20))
        XCTAssertTrue(bridge.state.engineOn, "held level 2 s after the wobble: armed")
        XCTAssertEqual(loop.now().duration(since: again), .seconds(2))
        XCTAssertEqual(link.texts, [], "arming sends nothing by itself")
        source.tilt(pitch: 12, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,40,1"], "12°: (12 − 6) / 20 × 12 steps → 40")
    }

    func testLeaningBackAtSpeedSendsTheStopFrameInTheSameLoopTurn() throws {
        try start(tiltRig, role: .accelerometer)
        try hold(pitch: 0, for: .milliseconds(2020))
        XCTAssertTrue(bridge.state.engineOn)
        source.tilt(pitch: 40, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,120,1"], "40° is past full_deg: max_speed")
        try hold(pitch: 40, for: .milliseconds(100))
        link.forgetFrames()
        let back = loop.now()
        source.tilt(pitch: -10, at: back)
        // No loop turn in between: the stop frame went out while the sample was handled.
        XCTAssertEqual(link.texts, ["M,0,0,1"], "leaning back at speed: the stop frame at once")
        XCTAssertEqual(link.frames.first?.time, back)
        try hold(pitch: 12, for: .milliseconds(200))
        XCTAssertEqual(link.texts, ["M,0,0,1"], "straight from leaning back to forward: nothing until neutral")
        try hold(pitch: 0, for: .milliseconds(20))
        source.tilt(pitch: 12, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,0,1", "M,0,40,1"], "back through neutral: the lean drives again")
    }

    func testATiltRigThatFallsSilentStopsTheCarAtTheInputTimeout() throws {
        try start(tiltRig, role: .accelerometer)
        try hold(pitch: 0, for: .milliseconds(2020))
        try hold(pitch: 12, for: .milliseconds(100))
        link.forgetFrames()
        let last = loop.now()
        source.tilt(pitch: 12, at: last)  // the last sample
        try DriveTestSupport.run(loop, for: .milliseconds(499))
        XCTAssertTrue(link.texts.allSatisfy { $0 == "M,0,40,1" }, "\(link.texts)")
        link.forgetFrames()
        try DriveTestSupport.run(loop, for: .milliseconds(1))
        XCTAssertEqual(link.texts, ["M,0,0,1"], "silent for input_timeout_ms: the stop frame")
        XCTAssertEqual(link.frames.first?.time, last.advanced(by: .milliseconds(500)))
        try DriveTestSupport.run(loop, for: .seconds(1))
        XCTAssertEqual(link.texts, ["M,0,0,1"], "nothing streams at S = 0")
        XCTAssertEqual(bridge.state.speed, 0)
    }

    func testAfterTheSensorIsBackTheRigArmsAgainOnlyAfterAFullLevelHoldAndTheLogSaysSo() throws {
        try start(tiltRig, role: .accelerometer)
        try hold(pitch: 0, for: .milliseconds(2020))
        try hold(pitch: 12, for: .milliseconds(100))
        XCTAssertEqual(bridge.state.speed, 40)
        try DriveTestSupport.run(loop, for: .milliseconds(500))
        XCTAssertEqual(bridge.state.speed, 0, "silent for input_timeout_ms: stopped")
        link.forgetFrames()
        try hold(pitch: 0, for: .milliseconds(600))
        XCTAssertEqual(log.all.filter { $0.contains("back:") }, [
            "notice: accelerometer back: driving resumes only after a new arming: hold it level for arm_after_s (2 s), as at the start",
        ])
        try hold(pitch: 12, for: .milliseconds(200))
        XCTAssertEqual(link.texts, [], "back and level 0.6 s: the lean sends nothing")
        try hold(pitch: 0, for: .milliseconds(2000))
        XCTAssertEqual(link.texts, [], "a full level hold from the wobble: armed, nothing sent by itself")
        source.tilt(pitch: 12, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,40,1"], "armed again: the lean drives")
    }

    func testAPadTriggerHeldThroughAnUnplugMustComeBackToRestAndTheLogSaysSo() throws {
        try start("[throttle]\naxis = \"ABS_RZ\"\n", role: .gamepad)
        bridge.apply(.engine)
        source.trigger(0.5, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,120,1"])
        source.disappear("unplugged")
        XCTAssertEqual(link.texts, ["M,0,120,1", "M,0,0,1"], "lost input: the stop frame")
        link.forgetFrames()
        try DriveTestSupport.run(loop, for: .milliseconds(300))
        let back = HandDrivenSource("fake pad again")
        try inputs.attach(back, role: .gamepad, name: back.description)
        XCTAssertEqual(log.all.filter { $0.contains("back:") }, [
            "notice: gamepad back: driving may resume once the throttle has been back at rest (the car moves when the driver acts)",
        ])
        back.trigger(0.5, at: loop.now())
        back.trigger(0.6, at: loop.now())
        XCTAssertEqual(link.texts, [], "the trigger still held: nothing moves")
        back.trigger(0, at: loop.now())
        back.trigger(0.5, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,120,1"], "released and pressed again: it drives")
    }

    private let board = """
        [steering]
        source = "board"
        [throttle]
        source = "board"
        [handsfree]
        arm_after_s = 2
        engine_off_after_s = 5
        """

    func testABoardWobblePastTheDeadZoneRestartsTheCount() throws {
        try start(board, role: .board)
        let on = loop.now()
        source.stand(60, at: on)
        try DriveTestSupport.run(loop, for: .milliseconds(1500))
        source.stand(60, y: 0.2, at: loop.now())  // leaning past the 0.1 dead zone before arming
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        let again = loop.now()
        source.stand(60, x: 0.05, at: again)
        try DriveTestSupport.run(loop, for: .milliseconds(1999))
        XCTAssertFalse(bridge.state.engineOn, "the first count (due at 2 s) was restarted by the wobble")
        XCTAssertEqual(link.texts, [], "nothing is sent before arming, the lean included")
        try DriveTestSupport.run(loop, for: .milliseconds(1))
        XCTAssertTrue(bridge.state.engineOn, "2 s still after the wobble: armed")
        XCTAssertEqual(loop.now().duration(since: again), .seconds(2))
    }

    func testABoardThatDisconnectsAtSpeedIsLostInput() throws {
        try start(board, role: .board)
        source.stand(60, at: loop.now())
        try DriveTestSupport.run(loop, for: .seconds(2))
        XCTAssertTrue(bridge.state.engineOn)
        source.stand(60, y: 0.3, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,120,1"])
        try DriveTestSupport.run(loop, for: .milliseconds(60))
        link.forgetFrames()
        let gone = loop.now()
        source.disappear("Bluetooth link lost")
        XCTAssertEqual(link.texts, ["M,0,0,1"], "the board gone at speed: the stop frame at once")
        XCTAssertEqual(link.frames.first?.time, gone)
        try DriveTestSupport.run(loop, for: .seconds(6))
        XCTAssertEqual(link.texts, ["M,0,0,1"], "nothing more while it is gone (on_input_lost = stop keeps the engine on)")
        XCTAssertEqual(bridge.state.speed, 0)
    }
}
