import DriveConfig
import DriveCore
import DriveInput
import DriveLink
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Glibc
import Logging
import XCTest

/// Signals a test delivers by hand, on the loop's thread.
final class ManualSignals: SignalSource {
    private(set) var watched: [[Int32]] = []
    private var handler: ((Int32) -> Void)?

    func watch(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        watched.append(signals)
        self.handler = handler
    }

    /// Delivers `signal` as the signalfd would: only a watched signal reaches the session.
    func deliver(_ signal: Int32) {
        guard watched.last?.contains(signal) == true else { return }
        handler?(signal)
    }
}

/// Job control for a test: records each process stop with the loop's time and the terminal's mode
/// at that moment, and says whether "the shell" gave carbridge the foreground.
final class RecordingJobControl: JobControl {
    var foreground = true
    private(set) var stops: [(signal: Int32, at: Instant, terminalRaw: Bool)] = []
    private let loop: EventLoop
    private let terminalFD: Int32

    init(loop: EventLoop, terminalFD: Int32) {
        self.loop = loop
        self.terminalFD = terminalFD
    }

    func stopProcess(with signal: Int32) {
        stops.append((signal, loop.now(), RunSessionTests.isRaw(terminalFD)))
    }

    func isForeground(terminal fd: Int32) -> Bool { foreground }
}

/// A link whose flushes end when the test says so (or at their window, like a real link).
final class SessionTestLink: CarLink {
    let name = "session-test"
    private(set) var state: LinkState = .down(reason: "not started")
    var onStateChange: ((LinkState) -> Void)?
    var onLine: ((CarLine) -> Void)?
    private(set) var started = false
    private(set) var frames: [(text: String, at: Instant)] = []
    private(set) var flushCalls: [Duration] = []
    private(set) var shutdownCalls: [Duration] = []
    /// False: flushes never drain, they end at their window with `.timedOut` (a stuck car).
    var drains = true
    /// Also called with each event, for order checks across objects.
    var events: ((String) -> Void)?
    private let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    var texts: [String] { frames.map(\.text) }

    func start() {
        started = true
        set(.connecting)
    }

    func send(_ frame: Frame) {
        frames.append((frame.text, loop.now()))
        events?("frame \(frame.text)")
    }

    func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        flushCalls.append(within)
        finish(within: within, done)
    }

    func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        shutdownCalls.append(flushWithin)
        events?("shutdown")
        finish(within: flushWithin) { [weak self] result in
            self?.set(.closed)
            done(result)
        }
    }

    private func finish(within: Duration, _ done: @escaping (FlushResult) -> Void) {
        guard state.isUp else { return loop.execute { done(.linkDown) } }
        if drains {
            loop.execute { done(.delivered) }
        } else {
            loop.schedule(after: within) { done(.timedOut) }
        }
    }

    func set(_ newState: LinkState) {
        guard newState != state else { return }
        state = newState
        onStateChange?(newState)
    }
}

/// A dashboard-like extension that records its start and stop, or fails to start.
final class RecordingExtension: RunSessionExtension {
    var fails = false
    private let record: (String) -> Void
    init(record: @escaping (String) -> Void) { self.record = record }

    struct Refused: Error, CustomStringConvertible {
        var description: String { "port in use" }
    }

    func start(bridge: Bridge, model: RunViewModel, loop: EventLoop) throws {
        if fails { throw Refused() }
        record("extension start")
    }

    func stop() { record("extension stop") }
}

/// `RunSession` as composed services on a manual clock: its terminal is a pseudo-terminal, its
/// signals and job control are delivered and answered by the test, its link records frames. Signals,
/// job control, the shutdown flush and the kiosk's session limit are checked at exact instants, with
/// no process, no real signal and no wall time.
final class RunSessionTests: XCTestCase {
    private var loop: EventLoop!
    private var master: Int32 = -1
    private var slave: Int32 = -1
    private var signals: ManualSignals!
    private var jobControl: RecordingJobControl!
    private var link: SessionTestLink!
    private var events: [String] = []
    private var systemdMessages: [String] = []

    override func setUpWithError() throws {
        loop = try makeManualLoop()
        XCTAssertEqual(openpty(&master, &slave, nil, nil, nil), 0)
        // The test reads what the view wrote without blocking.
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        signals = ManualSignals()
        jobControl = RecordingJobControl(loop: loop, terminalFD: slave)
        link = SessionTestLink(loop: loop)
        link.events = { [unowned self] in events.append($0) }
    }

    override func tearDown() {
        if master >= 0 { close(master) }
        if slave >= 0 { close(slave) }
        loop = nil
    }

    static func isRaw(_ fd: Int32) -> Bool {
        var mode = termios()
        guard tcgetattr(fd, &mode) == 0 else { return false }
        return mode.c_lflag & tcflag_t(ICANON) == 0
    }

    private func makeSession(
        options: RunSession.Options = RunSession.Options(), configure: (inout CarbridgeConfig) -> Void = { _ in },
        extensions: [any RunSessionExtension] = [], systemd: Bool = false
    ) throws -> RunSession {
        var config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        configure(&config)
        var options = options
        options.devices = false
        let link = self.link!
        var environment = RunEnvironment(
            loop: loop, keyboardFD: slave, screenFD: slave, signals: signals, jobControl: jobControl,
            makeLink: { _, _ in link })
        if systemd {
            environment.makeSystemdNotifier = { [unowned self] loop in
                SystemdNotifier(loop: loop, watchdogTimeout: nil) { message in
                    self.systemdMessages.append(message)
                    self.events.append("systemd \(message.split(separator: "\n")[0])")
                }
            }
        }
        let session = RunSession(
            config: config, options: options, environment: environment,
            logger: Logger(label: "run-session-test") { _ in SwiftLogNoOpLogHandler() }, sink: LogSink(fd: slave))
        session.extensions = extensions
        return session
    }

    /// Starts `session` with the link up, the engine on and the car moving at `speed`.
    private func startMoving(_ session: RunSession, speed: Int = 40) throws {
        try session.start()
        try loop.advance(by: .zero)
        link.set(.up)
        let bridge = try XCTUnwrap(session.bridge)
        bridge.apply(.engine)
        for _ in 0..<(speed / 10) { bridge.apply(.speedUp) }
        try loop.advance(by: .milliseconds(120))
        XCTAssertEqual(bridge.state.speed, speed)
    }

    /// Runs the loop (manual time) until the session's loop stops; returns how long that took.
    private func runUntilStopped(within limit: Duration = .seconds(10)) throws -> Duration {
        let start = loop.now()
        try loop.run(until: start.advanced(by: limit))
        XCTAssertTrue(loop.isStopped, "the loop did not stop within \(limit)")
        return loop.now().duration(since: start)
    }

    /// What the view wrote to the terminal so far.
    private func screenText() -> String { readText(until: master) }

    /// Types `text` on the terminal and waits (on the fd, not on time) until carbridge's side can read it.
    private func type(_ text: String) throws {
        XCTAssertEqual(write(master, text, text.utf8.count), text.utf8.count)
        var poller = pollfd(fd: slave, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&poller, 1, 5000), 1, "the terminal never delivered \(text.debugDescription)")
        try loop.advance(by: .zero)
    }

    // MARK: composition

    func testServicesStartInOrderAndStopInReverse() throws {
        let session = try makeSession(extensions: [RecordingExtension { [unowned self] in events.append($0) }], systemd: true)
        try session.start()
        XCTAssertEqual(
            session.services?.services.map(\.name), ["terminal", "signals", "RecordingExtension", "link", "feedback", "inputs", "systemd"])
        // One list of subscribers, the view model first, so that every view reads a snapshot that has the event.
        XCTAssertEqual(
            session.events?.subscribers.map { String(describing: Swift.type(of: $0)) },
            ["RunViewModel", "FeedbackService", "TerminalService", "SystemdService"])
        XCTAssertTrue(link.started)
        XCTAssertTrue(Self.isRaw(slave), "the terminal service took the keyboard")
        // The stop signals are watched before anything starts; SIGTTIN/SIGTTOU only once the terminal is set up.
        XCTAssertEqual(signals.watched.count, 2)
        XCTAssertFalse(signals.watched[0].contains(SIGTTIN))
        XCTAssertTrue(signals.watched[1].contains(SIGTTIN) && signals.watched[1].contains(SIGTTOU))
        try loop.advance(by: .zero)
        XCTAssertTrue(systemdMessages.first?.hasPrefix("READY=1") == true)

        signals.deliver(SIGTERM)
        _ = try runUntilStopped()
        XCTAssertEqual(session.finish(), 0)
        XCTAssertEqual(session.events?.subscribers.count, 0, "the run's end lets every subscriber go")
        XCTAssertEqual(events.filter { $0.hasPrefix("extension") }, ["extension start", "extension stop"])
        XCTAssertFalse(Self.isRaw(slave), "the terminal was given back when the services stopped")
    }

    func testAServiceThatFailsToStartStopsTheOnesBeforeItAndNothingIsSent() throws {
        let failing = RecordingExtension { [unowned self] in events.append($0) }
        failing.fails = true
        let session = try makeSession(extensions: [failing])
        XCTAssertThrowsError(try session.start()) { error in
            XCTAssertEqual("\(error)", "port in use", "the service's own message reaches the user")
        }
        XCTAssertFalse(link.started, "the link never connected")
        XCTAssertTrue(link.frames.isEmpty)
        XCTAssertFalse(Self.isRaw(slave), "the terminal, started before the failing service, was restored")
        XCTAssertEqual(events, [], "the failing extension is not stopped (it never started)")
    }

    func testInputsThatFailToStartCloseTheLinkThatStartedBeforeThemAndNothingIsSent() throws {
        var options = RunSession.Options()
        options.replay = try EvemuRecording.parse("# EVEMU 1.3\nN: Empty\nI: 0003 045e 028e 0110\n")
        let session = try makeSession(options: options) { $0.devices.mappingDB = "/nonexistent/gamecontrollerdb.txt" }
        XCTAssertThrowsError(try session.start()) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot read the GameControllerDB file /nonexistent/gamecontrollerdb.txt"), "\(error)")
        }
        XCTAssertTrue(link.started, "the link starts before the inputs")
        XCTAssertEqual(link.shutdownCalls, [.zero], "and is closed at once when they fail")
        try loop.advance(by: .seconds(1))
        XCTAssertTrue(link.frames.isEmpty, "nothing was sent")
        XCTAssertFalse(Self.isRaw(slave), "the terminal was restored")
    }

    func testGroupStopsStartedServicesInReverseOnceAndAnnouncesShutdownOnce() throws {
        final class Probe: RunService {
            let name: String
            let log: (String) -> Void
            var fails = false
            init(_ name: String, log: @escaping (String) -> Void) {
                self.name = name
                self.log = log
            }
            func start() throws {
                if fails { throw CarbridgeError("\(name) refused") }
                log("start \(name)")
            }
            func shutdownBegan() { log("shutdown \(name)") }
            func stop() { log("stop \(name)") }
        }
        var log: [String] = []
        let a = Probe("a") { log.append($0) }, b = Probe("b") { log.append($0) }, c = Probe("c") { log.append($0) }
        let group = ServiceGroup([a, b, c])
        try group.start()
        group.shutdownBegan()
        group.shutdownBegan()
        group.stop()
        group.stop()
        XCTAssertEqual(log, ["start a", "start b", "start c", "shutdown c", "shutdown b", "shutdown a", "stop c", "stop b", "stop a"])

        log = []
        c.fails = true
        XCTAssertThrowsError(try ServiceGroup([a, b, c]).start())
        XCTAssertEqual(log, ["start a", "start b", "stop b", "stop a"])
    }

    // MARK: signals and shutdown

    func testEachStopSignalSendsEngineOffAtOnceAndEndsTheRunAfterTheFlush() throws {
        for (index, signal) in [SIGTERM, SIGINT, SIGHUP, SIGQUIT].enumerated() {
            if index > 0 {
                tearDown()
                try setUpWithError()
                events = []
                systemdMessages = []
            }
            let session = try makeSession(systemd: true)
            try startMoving(session)
            let sentBefore = link.frames.count
            let at = loop.now()
            signals.deliver(signal)
            let took = try runUntilStopped()
            XCTAssertEqual(took, .zero, "signal \(signal): the flush was immediate, so was the end")
            let after = link.frames[sentBefore...]
            XCTAssertEqual(after.map(\.text), ["E,0,0,0"], "signal \(signal)")
            XCTAssertEqual(after.first?.at, at)
            XCTAssertEqual(link.shutdownCalls, [.seconds(1)])
            // STOPPING=1 goes out before the engine-off frame.
            let stopping = events.firstIndex { $0.hasPrefix("systemd STOPPING=1") }
            let engineOff = events.lastIndex(of: "frame E,0,0,0")
            XCTAssertNotNil(stopping)
            XCTAssertLessThan(stopping ?? .max, engineOff ?? .min)
            XCTAssertEqual(session.finish(), 0)
            XCTAssertTrue(screenText().contains("carbridge: stopped; \(link.frames.count) frames sent"))
            XCTAssertFalse(Self.isRaw(slave))
        }
    }

    func testACarThatDoesNotTakeTheEngineOffFrameEndsTheRunAtTheFlushWindow() throws {
        let session = try makeSession()
        try startMoving(session)
        link.drains = false
        signals.deliver(SIGTERM)
        let took = try runUntilStopped()
        XCTAssertEqual(link.texts.last, "E,0,0,0")
        XCTAssertEqual(took, .seconds(1), "the flush window, exactly")
        XCTAssertEqual(session.finish(), 0)
    }

    func testTheHardStopEndsARunWhoseLinkNeverAnswers() throws {
        var options = RunSession.Options()
        XCTAssertEqual(options.shutdown.hardStop, .seconds(3))
        // A link that would not even time its own flush out before a minute.
        options.shutdown.flushWindow = .seconds(60)
        let session = try makeSession(options: options)
        try startMoving(session)
        link.drains = false
        signals.deliver(SIGTERM)
        let took = try runUntilStopped(within: .seconds(30))
        XCTAssertEqual(took, .seconds(3), "the hard stop, exactly")
        XCTAssertEqual(link.texts.last, "E,0,0,0")
        XCTAssertEqual(session.finish(), 0)
    }

    func testQuitKeyStopsTheRunWithEngineOff() throws {
        let session = try makeSession()
        try startMoving(session)
        try type("q")
        _ = try runUntilStopped()
        XCTAssertEqual(link.texts.last, "E,0,0,0")
        XCTAssertEqual(session.finish(), 0)
    }

    func testTheKeyboardDrivesThroughTheSession() throws {
        let session = try makeSession()
        try session.start()
        link.set(.up)
        try type("e")
        try type("+")
        try type("+")
        XCTAssertEqual(link.texts, ["E,0,0,0", "M,0,10,1", "M,0,20,1"], "the handshake, then the keys' frames")
        _ = session
    }

    func testAClosedTerminalIsLostInputThenTheRunEnds() throws {
        let session = try makeSession()
        try startMoving(session)
        let sent = link.frames.count
        close(master)
        master = -1
        _ = try runUntilStopped()
        // Lost input stops the car (the stop frame), then the shutdown turns the engine off.
        XCTAssertEqual(Array(link.texts[sent...]), ["M,0,0,1", "E,0,0,0"])
        XCTAssertEqual(session.finish(), 0)
    }

    // MARK: job control

    func testCtrlZFlushesTheStopFrameGivesTheTerminalBackThenStops() throws {
        let session = try makeSession()
        try startMoving(session)
        let sent = link.frames.count
        let at = loop.now()
        signals.deliver(SIGTSTP)
        try loop.advance(by: .zero)
        XCTAssertEqual(Array(link.texts[sent...]), ["M,0,0,1"], "the stop frame, engine still on")
        XCTAssertEqual(link.flushCalls, [.milliseconds(500)])
        XCTAssertEqual(jobControl.stops.count, 1)
        XCTAssertEqual(jobControl.stops.first?.signal, SIGTSTP)
        XCTAssertEqual(jobControl.stops.first?.at, at, "stopped as soon as the stop frame was flushed")
        XCTAssertEqual(jobControl.stops.first?.terminalRaw, false, "the shell gets a cooked terminal")
        // `fg`: the stop returned in the foreground; raw again, nothing moves until the driver acts.
        XCTAssertTrue(Self.isRaw(slave))
        XCTAssertEqual(session.bridge?.state.engineOn, true)
        XCTAssertEqual(session.bridge?.state.speed, 0)
        let afterStop = link.frames.count
        try loop.advance(by: .seconds(2))
        XCTAssertEqual(link.frames.count, afterStop, "no frame while standing")
        try type("+")
        XCTAssertEqual(link.texts.last, "M,0,10,1", "the keyboard drives again")
    }

    func testSuspendWaitsAtMostTheSuspendFlushForACarThatDoesNotTakeTheStopFrame() throws {
        let session = try makeSession()
        try startMoving(session)
        link.drains = false
        let at = loop.now()
        signals.deliver(SIGTTOU)
        try loop.advance(by: .seconds(1))
        XCTAssertEqual(jobControl.stops.map(\.signal), [SIGTTOU])
        XCTAssertEqual(jobControl.stops.first?.at, at.advanced(by: .milliseconds(500)))
        _ = session
    }

    func testContinuedInTheBackgroundLeavesTheTerminalToTheShellUntilFg() throws {
        let session = try makeSession()
        try startMoving(session)
        jobControl.foreground = false  // the shell continues the job with `bg`
        signals.deliver(SIGTSTP)
        try loop.advance(by: .zero)
        XCTAssertEqual(jobControl.stops.count, 1)
        XCTAssertFalse(Self.isRaw(slave), "in the background the shell keeps the terminal")
        try loop.advance(by: .seconds(1))
        XCTAssertFalse(Self.isRaw(slave))
        XCTAssertEqual(session.bridge?.state.speed, 0)
        // `fg` sends no SIGCONT to a running job: the next foreground check, 200 ms apart, takes it.
        let fg = loop.now().advanced(by: .milliseconds(50))
        try loop.advance(to: fg)
        jobControl.foreground = true
        try loop.advance(by: .milliseconds(149))
        XCTAssertFalse(Self.isRaw(slave), "not before the check")
        try loop.advance(by: .milliseconds(1))
        XCTAssertTrue(Self.isRaw(slave), "raw at the check after fg")
        try type("+")
        XCTAssertEqual(link.texts.last, "M,0,10,1")
    }

    func testAStopSignalDuringTheSuspendFlushEndsTheRunInsteadOfStopping() throws {
        let session = try makeSession()
        try startMoving(session)
        link.drains = false
        signals.deliver(SIGTSTP)
        try loop.advance(by: .milliseconds(100))
        signals.deliver(SIGTERM)
        _ = try runUntilStopped()
        XCTAssertEqual(jobControl.stops.count, 0, "exits instead of stopping")
        XCTAssertEqual(link.texts.suffix(2), ["M,0,0,1", "E,0,0,0"])
        XCTAssertEqual(session.finish(), 0)
    }

    // MARK: the kiosk's turn

    func testTheSessionLimitEndsTheTurnAtItsInstantAndTheRunGoesOn() throws {
        let session = try makeSession { $0.kiosk.sessionLimit = .seconds(2) }
        try session.start()
        link.set(.up)
        let bridge = try XCTUnwrap(session.bridge)
        let turnStart = loop.now()
        bridge.apply(.engine)
        for _ in 0..<3 { bridge.apply(.speedUp) }
        try loop.advance(to: turnStart.advanced(by: .milliseconds(1999)))
        XCTAssertEqual(bridge.state.speed, 30)
        let sent = link.frames.count
        try loop.advance(by: .milliseconds(1))
        let ended = link.frames[sent...]
        XCTAssertEqual(ended.map(\.text), ["M,0,0,1", "E,0,0,0"])
        XCTAssertTrue(ended.allSatisfy { $0.at == turnStart.advanced(by: .seconds(2)) })
        XCTAssertFalse(loop.isStopped, "the run goes on: the next visitor's Engine starts a turn")
        try loop.advance(by: .seconds(5))
        XCTAssertEqual(link.frames.count, sent + 2, "nothing after the turn ended")
        bridge.apply(.engine)
        XCTAssertEqual(bridge.state.engineOn, true)
        _ = session
    }

    /// The dashboard lists what the pad's rumble plays, also in a run without a pad (the keyboard drives).
    func testTheViewsListTheFeedbackEventsAtTheirInstants() throws {
        let session = try makeSession {
            $0.kiosk.sessionLimit = .seconds(12)
            $0.drive.maxSpeed = 20
        }
        try session.start()
        link.set(.up)
        let model = try XCTUnwrap(session.model)
        let on = loop.now()
        try type("e")
        try type("+")
        try type("+")
        XCTAssertEqual(model.snapshot.feedback.map(\.event), [.engineOn], "Speed+ up to the cap is no event")
        try type("+")
        XCTAssertEqual(model.snapshot.feedback.map(\.event), [.engineOn, .speedCapped])
        try loop.advance(to: on.advanced(by: .seconds(2)))
        XCTAssertEqual(model.snapshot.feedback.last?.event, .turnEnding, "10 s before the 12 s turn ends")
        XCTAssertEqual(model.snapshot.feedback.last?.time, on.advanced(by: .seconds(2)))
        link.set(.down(reason: "test"))
        XCTAssertEqual(model.snapshot.feedback.map(\.event), [.engineOn, .speedCapped, .turnEnding, .stopped])
        _ = session
    }
}
