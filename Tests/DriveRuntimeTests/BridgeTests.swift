import DriveCore
import DriveLink
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// A `CarLink` test double: records every frame handed to it (with the loop's time) and lets the
/// test move its state up and down.
final class RecordingCarLink: CarLink {
    let name = "recording"
    private(set) var state: LinkState = .down(reason: "not started")
    var onStateChange: ((LinkState) -> Void)?
    var onLine: ((CarLine) -> Void)?
    var onNotice: ((String) -> Void)?
    private(set) var started = false
    private(set) var frames: [(frame: Frame, time: Instant)] = []
    private(set) var shutdownCalls: [Duration] = []
    private(set) var flushCalls: [Duration] = []
    /// How many frames were sent when `shutdown` was called.
    private(set) var framesAtShutdown: Int?
    private let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    var texts: [String] { frames.map(\.frame.text) }

    func start() {
        started = true
        set(.connecting)
    }

    func send(_ frame: Frame) {
        // A real link drops frames while not up; the bridge must not even try.
        XCTAssertTrue(state.isUp, "frame \(frame.text) handed to a link that is \(state)")
        frames.append((frame, loop.now()))
    }

    func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        flushCalls.append(within)
        let result: FlushResult = state.isUp ? .delivered : .linkDown
        loop.execute { done(result) }
    }

    func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        shutdownCalls.append(flushWithin)
        framesAtShutdown = frames.count
        let result: FlushResult = state.isUp ? .delivered : .linkDown
        set(.closed)
        loop.execute { done(result) }
    }

    /// Forgets the frames recorded so far (after a test has checked the handshake).
    func forgetFrames() { frames.removeAll() }

    func set(_ newState: LinkState) {
        guard newState != state else { return }
        state = newState
        onStateChange?(newState)
    }
}

/// The bridge on an `EventLoop` with a manual clock and a recording link: safety on link loss,
/// streaming on the loop's timer (exactly on the 50 ms grid), shutdown, idle timeout (exactly at its
/// deadline) and input loss. No wall time passes.
final class BridgeTests: XCTestCase {
    private var loop: EventLoop!
    private var link: RecordingCarLink!

    private func makeBridge(_ settings: DriveSettings = DriveSettings(), up: Bool = true) throws -> Bridge {
        loop = try makeManualLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "bridge-test") { _ in SwiftLogNoOpLogHandler() }
        let bridge = Bridge(settings: settings, link: link, loop: loop, logger: logger)
        bridge.start()
        if up {
            link.set(.up)
            XCTAssertEqual(link.texts, ["E,0,0,0"], "the handshake (engine off) must be the first frame")
            link.forgetFrames()
        }
        return bridge
    }

    /// Advances the loop's manual clock by `milliseconds`, firing the timers on the way.
    private func run(milliseconds: Int64) throws {
        try DriveTestSupport.run(loop, for: .milliseconds(milliseconds))
    }

    func testLinkDownWhileMovingResetsSpeedAndSendsNothingWhileDown() throws {
        let bridge = try makeBridge()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        XCTAssertEqual(bridge.state.speed, 20)
        XCTAssertEqual(link.texts, ["M,0,10,1", "M,0,20,1"])

        link.set(.down(reason: "test: car gone"))
        XCTAssertEqual(bridge.state.speed, 0, "a lost link must reset S to 0")
        XCTAssertTrue(bridge.state.engineOn, "the engine state is kept")
        let sentBeforeLoss = link.frames.count
        try run(milliseconds: 300)  // the stream timer must be gone
        bridge.apply(.gear)        // a control that would send a frame: nothing may reach a down link
        bridge.apply(.function(1))
        try run(milliseconds: 100)
        XCTAssertEqual(link.frames.count, sentBeforeLoss, "frames while down: \(link.texts)")
        XCTAssertEqual(bridge.framesSent, sentBeforeLoss + 1, "the frames and the handshake")
    }

    /// What a link has to say (a BLE car's profile) is a run event like every notice, not a write to stderr
    /// past the logger and the live view.
    func testALinksNoticeIsARunEvent() throws {
        let bridge = try makeBridge()
        final class Notices: RunSubscriber {
            var texts: [String] = []
            func receive(_ event: RunEvent) { if case .notice(let text, _) = event { texts.append(text) } }
        }
        let notices = Notices()
        bridge.events.subscribe(notices)
        link.onNotice?("ble://HMSoft: HM-10 through write requests")
        XCTAssertEqual(notices.texts, ["ble://HMSoft: HM-10 through write requests"])
    }

    func testSpeedUpWhileLinkDownIsIgnored() throws {
        let bridge = try makeBridge(up: false)
        bridge.apply(.engine)
        let before = bridge.state
        bridge.apply(.speedUp)
        bridge.apply(.setSpeed(50))
        XCTAssertEqual(bridge.state, before, "Speed+ / throttle on a down link must not change the state")
        XCTAssertEqual(bridge.state.speed, 0)
        try run(milliseconds: 200)
        XCTAssertEqual(link.texts, [])

        link.set(.up)
        try run(milliseconds: 200)
        XCTAssertEqual(link.texts, ["M,0,0,1"], "only the handshake: nothing ignored while down may be sent later")
    }

    func testAfterLinkUpNoMotionUntilTheDriverActs() throws {
        let bridge = try makeBridge()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        try run(milliseconds: 120)
        link.set(.down(reason: "test"))
        link.set(.connecting)
        try run(milliseconds: 100)
        let sentBeforeReconnect = link.frames.count

        link.set(.up)
        XCTAssertEqual(link.texts.last, "M,0,0,1", "the handshake stops a car that kept its last command")
        try run(milliseconds: 400)
        XCTAssertEqual(bridge.state.speed, 0)
        XCTAssertEqual(link.frames.count, sentBeforeReconnect + 1,
                       "motion resumed by itself after reconnect: \(link.texts.suffix(5))")

        bridge.apply(.speedUp)
        XCTAssertEqual(link.texts.last, "M,0,10,1", "S was reset, so Speed+ starts from 0")
        XCTAssertEqual(link.frames.count, sentBeforeReconnect + 2)
    }

    func testStreamsEvery50msOnTheLoopAndStopsAtZero() throws {
        let bridge = try makeBridge()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        let start = link.frames.count
        try run(milliseconds: 500)
        let streamed = link.frames[start...]
        XCTAssertTrue(streamed.allSatisfy { $0.frame.text == "M,0,10,1" }, "\(link.texts)")
        XCTAssertEqual(streamed.count, 10, "stream frames in 500 ms (the one due at 500 ms included)")
        // Stream frames sit exactly on the 50 ms grid from the event frame.
        let origin = link.frames[start - 1].time
        XCTAssertEqual(link.frames[start...].map { $0.time.duration(since: origin) },
                       (1...10).map { Duration.milliseconds(50 * $0) })

        bridge.apply(.speedDown)
        XCTAssertEqual(link.texts.last, "M,0,0,1")
        let afterStop = link.frames.count
        try run(milliseconds: 300)
        XCTAssertEqual(link.frames.count, afterStop, "streaming went on at S=0: \(link.texts.suffix(3))")
    }

    func testShutdownWithEngineOnSendsOneEngineOffThenShutsTheLinkDown() throws {
        let bridge = try makeBridge()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        try run(milliseconds: 120)
        let before = link.frames.count
        var done = false
        bridge.shutdown(reason: "test") { done = true }
        XCTAssertEqual(Array(link.texts[before...]), ["E,0,0,0"])
        XCTAssertEqual(link.framesAtShutdown, before + 1, "E,0,0,0 must be handed over before the link's shutdown")
        XCTAssertEqual(link.shutdownCalls.count, 1)
        try run(milliseconds: 300)
        XCTAssertTrue(done)
        XCTAssertEqual(link.frames.count, before + 1, "frames after shutdown: \(link.texts.suffix(3))")
        // Controls after shutdown do nothing; a second shutdown does not send again.
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.shutdown(reason: "again") {}
        XCTAssertEqual(link.frames.count, before + 1)
        XCTAssertEqual(link.shutdownCalls.count, 1)
    }

    func testShutdownWithEngineOffSendsNothing() throws {
        let bridge = try makeBridge()
        var done = false
        bridge.shutdown(reason: "test") { done = true }
        try run(milliseconds: 50)
        XCTAssertTrue(done)
        XCTAssertEqual(link.texts, [])
        XCTAssertEqual(link.shutdownCalls.count, 1)
    }

    func testIdleTimeoutTurnsTheEngineOffOnTheLoop() throws {
        let bridge = try makeBridge(DriveSettings(idleTimeout: .milliseconds(200)))
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        let lastActivity = loop.now()
        try run(milliseconds: 500)
        XCTAssertFalse(bridge.state.engineOn)
        XCTAssertEqual(bridge.state.speed, 0)
        let engineOff = link.frames.enumerated().filter { $0.element.frame == .engineOff }
        XCTAssertEqual(engineOff.count, 1, "\(link.texts)")
        guard let offIndex = engineOff.first?.offset else { return }
        XCTAssertEqual(offIndex, link.frames.count - 1, "frames after E,0,0,0: \(link.texts)")
        XCTAssertEqual(link.frames[offIndex].time.duration(since: lastActivity), .milliseconds(200),
                       "the idle timeout fires exactly at its deadline")
        // Streamed until then: M,0,10,1 only.
        XCTAssertTrue(link.texts.dropLast().allSatisfy { $0 == "M,0,10,1" }, "\(link.texts)")
    }

    func testIdleTimeoutFiresWithEngineOnAndNoMotion() throws {
        let bridge = try makeBridge(DriveSettings(idleTimeout: .milliseconds(200)))
        bridge.apply(.engine)
        try run(milliseconds: 400)
        XCTAssertEqual(link.texts, ["E,0,0,0"])
        XCTAssertFalse(bridge.state.engineOn)
    }

    func testInputLostSendsTheStopFrame() throws {
        let bridge = try makeBridge()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        bridge.apply(.steer(70))
        bridge.apply(.inputLost)
        XCTAssertEqual(link.texts, ["M,0,10,1", "M,0,20,1", "R,2,20,1", "R,2,0,1"])
        XCTAssertEqual(bridge.state.speed, 0)
        try run(milliseconds: 200)
        XCTAssertEqual(link.texts.count, 4, "streaming went on after input loss: \(link.texts)")
    }

    func testInputLostWithEngineOffPolicySendsEngineOff() throws {
        let bridge = try makeBridge(DriveSettings(onInputLost: .engineOff))
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.apply(.inputLost)
        XCTAssertEqual(link.texts, ["M,0,10,1", "E,0,0,0"])
        XCTAssertFalse(bridge.state.engineOn)
    }
}
