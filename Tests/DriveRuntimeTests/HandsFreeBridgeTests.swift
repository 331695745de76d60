import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// A balance board stand-in: frames are pushed by the test, on the loop.
private final class FakeBoard: InputSource {
    let description = "fake balance board"
    var onFrame: ((InputFrame) -> Void)?
    var onGone: ((String) -> Void)?
    func start() throws {}
    func stop() {}

    /// Four cells (kg) spread so the centre of pressure is (`x`, `y`), as hid-wiimote reports them (10 g units).
    func stand(_ kilograms: Double, x: Double = 0, y: Double = 0, at time: Instant) {
        let w = kilograms
        let cells = [(16, w * (1 + x + y) / 4), (17, w * (1 + x - y) / 4), (18, w * (1 - x + y) / 4), (19, w * (1 - x - y) / 4)]
        onFrame?(InputFrame(time: time, axes: cells.map { AxisValue(code: UInt16($0.0), value: 0, raw: Int32(($0.1 * 100).rounded())) }))
    }
}

/// Hands-free on the board through the real runtime path (InputCoordinator → ControlMapper → Bridge) on a
/// manual-clock loop: arming at exactly 2 s, a lean forward, and the stop frame in the same loop turn as
/// the step-off, the engine off exactly `engine_off_after_s` later.
final class HandsFreeBridgeTests: XCTestCase {
    func testStepOffAtSpeedSendsTheStopFrameInTheSameLoopTurn() throws {
        let loop = try makeManualLoop()
        let link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "handsfree-test") { _ in SwiftLogNoOpLogHandler() }
        let config = try CarbridgeConfig.parse(
            text: """
                [steering]
                source = "board"
                [throttle]
                source = "board"
                [handsfree]
                arm_after_s = 2
                engine_off_after_s = 5
                """,
            file: "handsfree.toml", resolver: EventCodeNames())
        let bridge = Bridge(settings: config.drive, link: link, loop: loop, logger: logger)
        bridge.start()
        link.set(.up)
        XCTAssertEqual(link.texts, ["E,0,0,0"])
        link.forgetFrames()
        let inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        inputs.onControl = { [weak bridge] control in bridge?.apply(control) }
        bridge.events.subscribe(inputs)
        let model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        inputs.onHandsFree = { [weak bridge] reading in bridge?.events.publish(.handsFree(reading)) }
        let board = FakeBoard()
        try inputs.attach(board, role: .board, name: "board")
        defer { inputs.stop() }

        let start = loop.now()
        board.stand(60, at: start)
        try DriveTestSupport.run(loop, for: .milliseconds(1999))
        XCTAssertFalse(bridge.state.engineOn, "not armed before 2 s")
        try DriveTestSupport.run(loop, for: .milliseconds(1))
        XCTAssertTrue(bridge.state.engineOn, "armed after 2 s still on the board")
        XCTAssertEqual(link.texts, [], "engine on sends nothing by itself")
        XCTAssertEqual(model.snapshot.handsFree, HandsFreeReading(arming: .armed, weightKilograms: 60, centreX: 0, centreY: 0),
                       "the view sees the rider armed (the timer's tick reports too)")

        board.stand(60, y: 0.3, at: loop.now())
        XCTAssertEqual(link.texts, ["M,0,120,1"], "lean forward")
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertEqual(link.texts, ["M,0,120,1", "M,0,120,1", "M,0,120,1"], "streamed every 50 ms")
        link.forgetFrames()

        let stepOff = loop.now()
        board.stand(3, y: 0.3, at: stepOff)
        // No loop turn in between: the stop frame went out while the board's frame was handled.
        XCTAssertEqual(link.texts, ["M,0,0,1"], "stepping off at speed: the stop frame at once")
        XCTAssertEqual(link.frames.first?.time, stepOff)
        XCTAssertEqual(bridge.state.speed, 0)
        XCTAssertEqual(model.snapshot.handsFree?.arming, .leaving)
        XCTAssertEqual(model.snapshot.handsFree?.weightKilograms, 3)
        try DriveTestSupport.run(loop, for: .milliseconds(4999))
        XCTAssertEqual(link.texts, ["M,0,0,1"], "nothing streams at S = 0")
        try DriveTestSupport.run(loop, for: .milliseconds(1))
        XCTAssertEqual(link.texts, ["M,0,0,1", "E,0,0,0"], "engine off 5 s after stepping off")
        XCTAssertFalse(bridge.state.engineOn)
    }
}
