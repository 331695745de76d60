import DriveConfig
import DriveInput
import DriveCore
import DriveLink
import DriveRuntime
import DriveSystem
import DriveTerminal
import Logging
import XCTest

/// A bridge with a recording link (`RecordingCarLink`, BridgeTests) feeding a `RunViewModel`
/// directly: frames, link up/down, car lines, notices — with a logger that drops everything, so
/// nothing the model shows can have come through the log.
final class RunViewModelTests: XCTestCase {
    private var loop: EventLoop!
    private var link: RecordingCarLink!
    private var bridge: Bridge!
    private var model: RunViewModel!
    /// How often the model changed.
    private var changes: Int { model.version }

    override func setUpWithError() throws {
        loop = try EventLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "view-model-test") { _ in SwiftLogNoOpLogHandler() }
        bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: logger)
        model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        bridge.start()
    }

    override func tearDown() {
        bridge = nil
        model = nil
        link = nil
        loop = nil
    }

    func testStartsEmptyWithTheLinkName() {
        let fresh = RunViewModel(linkName: "tcp://car:7000")
        XCTAssertEqual(fresh.snapshot.linkName, "tcp://car:7000")
        XCTAssertEqual(fresh.snapshot.state, DriveState.initial)
        XCTAssertNil(fresh.snapshot.lastFrame)
        XCTAssertEqual(fresh.snapshot.framesSent, 0)
        XCTAssertTrue(fresh.snapshot.carLines.isEmpty)
        XCTAssertTrue(fresh.snapshot.notices.isEmpty)
        XCTAssertEqual(model.snapshot.linkName, "recording")
        XCTAssertEqual(model.snapshot.linkStatus, "connecting", "the bridge started the link")
    }

    func testFramesAndTheDriveStateArriveAsTheyAreDelivered() {
        link.set(.up)
        XCTAssertEqual(model.snapshot.lastFrame?.frame.text, "E,0,0,0", "the handshake")
        XCTAssertEqual(model.snapshot.framesSent, 1)

        let before = changes
        let appliedFrom = loop.now()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        XCTAssertGreaterThan(changes, before, "onChange was not called")
        XCTAssertTrue(model.snapshot.state.engineOn)
        XCTAssertEqual(model.snapshot.state.speed, 20)
        XCTAssertEqual(model.snapshot.state, bridge.state)
        XCTAssertEqual(model.snapshot.lastFrame?.frame.text, "M,0,20,1")
        if let time = model.snapshot.lastFrame?.time, let sentAt = link.frames.last?.time {
            XCTAssertTrue(appliedFrom <= time && time <= sentAt, "the frame's time is when the bridge handled the control")
        } else {
            XCTFail("no frame time")
        }
        XCTAssertEqual(model.snapshot.framesSent, 3)
        XCTAssertEqual(model.snapshot.framesSent, bridge.framesSent)

        // Streamed frames (the bridge's timer) count too.
        try? loop.run(until: loop.now().advanced(by: .milliseconds(160)))
        XCTAssertEqual(model.snapshot.framesSent, link.frames.count)
        XCTAssertGreaterThan(model.snapshot.framesSent, 3)
    }

    /// The feedback hears every link change, a state only when the engine or the speed changed, and only the
    /// controls the planner answers: a report that only steers costs it nothing.
    func testTheFeedbackAnswersEngineSpeedLinkAndLostInputAndTheModelListsItsCues() throws {
        var config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        config.drive.maxSpeed = 20
        let feedback = FeedbackService(
            config: config, loop: loop, events: bridge.events,
            logger: Logger(label: "feedback-test") { _ in SwiftLogNoOpLogHandler() })
        bridge.events.subscribe(feedback)
        defer { feedback.stop() }
        let cues = { self.model.snapshot.feedback.map(\.event) }
        link.set(.up)
        XCTAssertEqual(cues(), [], "a link coming up calls for no cue")
        bridge.apply(.engine)
        XCTAssertEqual(cues(), [.engineOn])
        bridge.apply(.steer(40))
        bridge.apply(.steer(-40))
        bridge.apply(.gear)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        XCTAssertEqual(cues(), [.engineOn], "steering, gear and Speed+ below the cap call for none")
        bridge.apply(.speedUp)
        XCTAssertEqual(cues(), [.engineOn, .speedCapped], "Speed+ at the cap")
        bridge.apply(.inputLost)
        XCTAssertEqual(cues(), [.engineOn, .speedCapped, .stopped], "lost input stops the car")
        link.set(.down(reason: "test"))
        XCTAssertEqual(cues(), [.engineOn, .speedCapped, .stopped, .stopped], "so does the link's loss")
    }

    func testSteeringWithTheEngineOffShowsTheAngleAndSendsNothing() {
        link.set(.up)
        bridge.apply(.steer(40))
        XCTAssertEqual(model.snapshot.state.angleDegrees, 40)
        XCTAssertEqual(model.snapshot.framesSent, 1, "only the handshake")
    }

    func testLinkUpAndDownChangeTheStatusAndPostNoticesWithoutTheLog() {
        link.set(.up)
        XCTAssertEqual(model.snapshot.linkStatus, "up")
        XCTAssertEqual(model.snapshot.notices, ["link up: recording"])

        bridge.apply(.engine)
        bridge.apply(.speedUp)
        link.set(.down(reason: "test: car gone"))
        XCTAssertEqual(model.snapshot.linkStatus, "down: test: car gone")
        XCTAssertEqual(model.snapshot.state.speed, 0, "S reset on link loss, shown at once")
        XCTAssertEqual(model.snapshot.notices.last, "link down: test: car gone (speed reset to 0)")

        bridge.apply(.speedUp)
        XCTAssertEqual(model.snapshot.notices.last, "link down: test: car gone: Speed+ ignored")

        link.set(.connecting)
        XCTAssertEqual(model.snapshot.linkStatus, "connecting")
        link.set(.up)
        XCTAssertEqual(model.snapshot.linkStatus, "up")
        XCTAssertEqual(model.snapshot.lastFrame?.frame.text, "M,0,0,1", "the reconnect's handshake")
        XCTAssertEqual(model.snapshot.notices.count, 4)
    }

    func testNoticesUseTheModelsFormatAndIgnoreTheBridgeLoggingSwitch() {
        model.noticeText = { "NOTICE " + $0 }
        bridge.logsReports = false
        link.set(.up)
        XCTAssertEqual(model.snapshot.notices, ["NOTICE link up: recording"])
        bridge.events.publish(.logLine("12:00:00.000 info carbridge: a log line"))
        XCTAssertEqual(model.snapshot.notices.last, "12:00:00.000 info carbridge: a log line", "log lines are kept as they are")
    }

    func testCarLinesKeepTheirTimesAndABoundedHistory() {
        model.historyLimit = 3
        link.set(.up)
        let start = loop.now()
        for index in 1...5 {
            link.onLine?(CarLine(time: start.advanced(by: .milliseconds(Int64(index))), text: "line \(index)"))
        }
        XCTAssertEqual(model.snapshot.carLines.map(\.text), ["line 3", "line 4", "line 5"])
        XCTAssertEqual(model.snapshot.carLines.map(\.time), (3...5).map { start.advanced(by: .milliseconds(Int64($0))) })

        for index in 1...5 { bridge.events.publish(.logLine("notice \(index)")) }
        XCTAssertEqual(model.snapshot.notices, ["notice 3", "notice 4", "notice 5"])
        model.historyLimit = 1
        XCTAssertEqual(model.snapshot.carLines.map(\.text), ["line 5"])
        XCTAssertEqual(model.snapshot.notices, ["notice 5"])
    }

    func testInputsAndTheLiveViewRenderTheModel() {
        link.set(.up)
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        link.onLine?(CarLine(time: loop.now(), text: "CAR forward at 10"))
        let before = changes
        bridge.events.publish(.device(InputDeviceChange(key: "keyboard", description: "keyboard", opened: true)))
        bridge.events.publish(.device(InputDeviceChange(key: "/sys/pad", description: "gamepad Pad", opened: true)))
        XCTAssertEqual(changes, before + 2, "each device that opens changes the view")

        let screen = RunView.render(model.snapshot, columns: 100, rows: 30, timeText: { _ in "T" })
        XCTAssertTrue(screen.contains("carbridge — recording  [up]"), screen)
        XCTAssertTrue(screen.contains("Engine ON    Speed  10   Gear forward"), screen)
        XCTAssertTrue(screen.contains("Last frame M,0,10,1  at T   (2 sent)"), screen)
        XCTAssertTrue(screen.contains("Inputs: keyboard, gamepad Pad"), screen)
        XCTAssertTrue(screen.contains("  T  CAR forward at 10"), screen)
        XCTAssertTrue(screen.contains("  link up: recording"), screen)
    }

    func testTheRunsEventsKeepTheModelAndTheModelDoesNotKeepTheBridge() {
        weak let weakModel = model
        model = nil
        // The bridge's subscribers keep the model ...
        XCTAssertNotNil(weakModel)
        bridge.apply(.engine)
        XCTAssertEqual(weakModel?.snapshot.state.engineOn, true)
        // ... and the model does not keep the bridge: both go when the bridge's owner lets go of it.
        weak let weakBridge = bridge
        bridge = nil
        XCTAssertNil(weakBridge)
        XCTAssertNil(weakModel)
    }

    func testADeviceThatClosesLeavesTheInputsInTheOrderTheyOpened() {
        let events = bridge.events
        events.publish(.device(InputDeviceChange(key: "keyboard", description: "keyboard", opened: true)))
        events.publish(.device(InputDeviceChange(key: "/sys/b", description: "gamepad B", opened: true)))
        events.publish(.device(InputDeviceChange(key: "/sys/a", description: "accelerometer A", opened: true)))
        XCTAssertEqual(model.snapshot.inputs, ["keyboard", "gamepad B", "accelerometer A"])
        events.publish(.device(InputDeviceChange(key: "/sys/b", description: "gamepad B", opened: false)))
        XCTAssertEqual(model.snapshot.inputs, ["keyboard", "accelerometer A"])
    }

    func testKeepsTheLastTenFeedbackEventsOldestFirst() {
        let t0 = loop.now()
        for index in 0..<12 {
            bridge.events.publish(.feedback(index % 2 == 0 ? .engineOn : .stopped, at: t0.advanced(by: .seconds(index))))
        }
        XCTAssertEqual(model.snapshot.feedback.count, RunViewModel.feedbackLimit)
        XCTAssertEqual(model.snapshot.feedback.first?.time, t0.advanced(by: .seconds(2)), "the two oldest went first")
        XCTAssertEqual(model.snapshot.feedback.last?.event, .stopped)
    }
}
