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
    private var changes = 0

    override func setUpWithError() throws {
        loop = try EventLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "view-model-test") { _ in SwiftLogNoOpLogHandler() }
        bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: logger)
        model = RunViewModel(observing: bridge)
        model.onChange = { [unowned self] in self.changes += 1 }
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
    func testTheFeedbackHearsEngineSpeedLinkAndTheControlsItAnswers() {
        var heard: [BridgeEvent] = []
        model.onBridgeEvent = { heard.append($0) }
        link.set(.up)
        XCTAssertEqual(heard.first, .link(up: true))
        heard.removeAll()
        bridge.apply(.engine)
        XCTAssertEqual(heard.map(Self.kind), ["state engine on 0"], "the engine went on")
        heard.removeAll()
        bridge.apply(.steer(40))
        bridge.apply(.steer(-40))
        bridge.apply(.gear)
        XCTAssertEqual(heard, [], "steering and gear change neither the engine nor the speed")
        bridge.apply(.speedUp)
        XCTAssertEqual(heard.map(Self.kind), ["applied speedUp", "state engine on 10"])
        heard.removeAll()
        bridge.apply(.steer(10))
        bridge.apply(.inputLost)
        XCTAssertEqual(heard.map(Self.kind), ["applied inputLost", "state engine on 0"], "lost input stops the car")
        heard.removeAll()
        link.set(.down(reason: "test"))
        XCTAssertEqual(heard.first, .link(up: false))

        // A new listener has been told nothing: it hears the next state even if engine and speed stayed.
        var fresh: [BridgeEvent] = []
        model.onBridgeEvent = { fresh.append($0) }
        bridge.apply(.steer(20))
        XCTAssertEqual(fresh.map(Self.kind), ["state engine on 0"])
    }

    private static func kind(_ event: BridgeEvent) -> String {
        switch event {
        case .state(let state): return "state engine \(state.engineOn ? "on" : "off") \(state.speed)"
        case .link(let up): return "link \(up)"
        case .applied(let control): return "applied \(control)"
        }
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
        model.appendNotice("12:00:00.000 info carbridge: a log line")
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

        for index in 1...5 { model.appendNotice("notice \(index)") }
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
        model.inputs = ["keyboard", "gamepad Pad"]
        XCTAssertEqual(changes, before + 1)

        let screen = RunView.render(model.snapshot, columns: 100, rows: 30, timeText: { _ in "T" })
        XCTAssertTrue(screen.contains("carbridge — recording  [up]"), screen)
        XCTAssertTrue(screen.contains("Engine ON    Speed  10   Gear forward"), screen)
        XCTAssertTrue(screen.contains("Last frame M,0,10,1  at T   (2 sent)"), screen)
        XCTAssertTrue(screen.contains("Inputs: keyboard, gamepad Pad"), screen)
        XCTAssertTrue(screen.contains("  T  CAR forward at 10"), screen)
        XCTAssertTrue(screen.contains("  link up: recording"), screen)
    }

    func testTheBridgeKeepsTheModelAndNeitherKeepsTheOther() {
        weak let weakModel = model
        model = nil
        // The bridge keeps its observer (a weak reference would cost every report a side-table lookup) ...
        XCTAssertNotNil(weakModel)
        bridge.apply(.engine)
        XCTAssertEqual(weakModel?.snapshot.state.engineOn, true)
        // ... and the model does not keep the bridge: both go when the bridge's owner lets go of it.
        weak let weakBridge = bridge
        bridge = nil
        XCTAssertNil(weakBridge)
        XCTAssertNil(weakModel)
    }

    func testKeepsTheLastTenFeedbackEventsOldestFirst() {
        let t0 = loop.now()
        for index in 0..<12 {
            model.record(index % 2 == 0 ? .engineOn : .stopped, at: t0.advanced(by: .seconds(index)))
        }
        XCTAssertEqual(model.snapshot.feedback.count, RunViewModel.feedbackLimit)
        XCTAssertEqual(model.snapshot.feedback.first?.time, t0.advanced(by: .seconds(2)), "the two oldest went first")
        XCTAssertEqual(model.snapshot.feedback.last?.event, .stopped)
    }
}
