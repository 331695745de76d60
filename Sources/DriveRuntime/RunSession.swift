import DriveConfig
import DriveCore
import DriveLink
import DriveSystem
import Glibc
import DriveInput
import Logging

/// `carbridge run`: a bridge between the car's link and the driver's inputs, composed of services
/// on one event loop, that runs until SIGINT/SIGTERM/SIGHUP/SIGQUIT, `q` or the end of a replay, and
/// always ends with the car stopped.
///
/// The services, started in this order and stopped in reverse (`ServiceGroup`): the terminal (keyboard and
/// live view), the job-control signals, the extensions (the dashboard), the link, the feedback (rumble), the
/// input devices, systemd's notifications. What happens is published to one list of subscribers
/// (`RunEvents`), told in order: the view model, the feedback, the live view, the dashboard, systemd's status,
/// the inputs' mapping. The link comes before the inputs so its
/// connection (a radio's RFCOMM handshake, a TCP one) is under way while the devices are enumerated. Everything the session touches outside
/// itself comes from its `RunEnvironment` (loop, fds, signals, job control, link, systemd), so tests
/// run the same session on a manual clock.
///
/// A stop: `shutdownBegan` to every service (systemd's `STOPPING=1`), the engine-off frame flushed to
/// the car within `shutdown.flushWindow`, the loop stopped, then the services stopped. It never hangs
/// on a stuck link: the loop stops after `shutdown.hardStop` whatever the link did.
///
/// Job control (SIGTSTP, SIGTTIN, SIGTTOU): the stop frame is flushed to the car first (S := 0,
/// the engine stays on; at most `shutdown.suspendFlush`), the terminal is given back to the shell,
/// then the process stops with the same signal. On SIGCONT in the foreground the terminal is raw
/// again and the view redrawn; continued in the background (`bg`), the terminal is left to the
/// shell until carbridge is in the foreground again (`fg`). The link stays up throughout.
public final class RunSession {
    /// What the command line adds to the config.
    public struct Options: Sendable {
        /// Read the terminal keyboard when stdin is a TTY.
        public var keyboard = true
        /// Draw the live view when stdout is a TTY.
        public var view = true
        /// Watch udev for the configured gamepad / accelerometer / key devices.
        public var devices = true
        /// Drive from this evemu recording instead of live devices; the run ends when it does.
        public var replay: EvemuRecording?
        /// The flush windows and the hard stop while stopping or suspending.
        public var shutdown = ShutdownConfiguration()
        /// Creates default options.
        public init() {}
    }

    /// The signals that end a run.
    static let stopSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT]
    /// SIGTTIN/SIGTTOU are job-control stops like SIGTSTP: whoever sends them gets the stop frame
    /// first. Watched (blocked) only once the terminal is set up, so that until then, started in the
    /// background, carbridge stops at its first tcsetattr as any terminal program does, before it
    /// connects; once blocked, the kernel no longer raises them for carbridge's own terminal access
    /// (it does not touch the terminal while the shell has it).
    static let jobControlSignals = stopSignals + [SIGTTIN, SIGTTOU]

    private let config: CarbridgeConfig
    private let options: Options
    private let environment: RunEnvironment
    private let logger: Logger
    private let sink: LogSink
    private var loop: EventLoop { environment.loop }
    /// Started with the run and stopped after it (the web dashboard); set before `start()`.
    public var extensions: [any RunSessionExtension] = []
    /// The bridge, once started.
    public private(set) var bridge: Bridge?
    /// The run's subscribers (the view model first), once started.
    public private(set) var events: RunEvents?
    /// What the live view shows (kept whether or not the view is up), once started.
    public private(set) var model: RunViewModel?
    /// The services, once started.
    public private(set) var services: ServiceGroup?
    private var terminal: TerminalService?
    private var exitCode: Int32 = 0
    private var stopping = false
    /// Between a stop signal and the end of the stop frame's flush.
    private var suspending = false

    /// Creates a session in `environment`; nothing runs until `start()` or `run()`.
    public init(config: CarbridgeConfig, options: Options, environment: RunEnvironment, logger: Logger, sink: LogSink) {
        self.config = config
        self.options = options
        self.environment = environment
        self.logger = logger
        self.sink = sink
    }

    /// True once the session was asked to stop (the loop ends when the engine-off flush did).
    public var isStopping: Bool { stopping }

    /// Runs until asked to stop; returns the process exit code.
    public func run() throws -> Int32 {
        try start()
        do {
            try loop.run()
        } catch {
            // A fatal error with the link up: engine off is still sent before exit.
            logger.error("fatal: \(error)")
            stop(reason: "fatal error", code: 1)
            try? loop.run(until: loop.now().advanced(by: .seconds(2)))
            exitCode = 1
        }
        return finish()
    }

    /// Builds the link, the bridge and the view model and starts the services in order; the loop
    /// is the caller's to run (`run()` runs it). A service that fails to start stops the ones
    /// before it, and its error is thrown.
    public func start() throws {
        precondition(services == nil, "RunSession.start: started already")
        let received: (Int32) -> Void = { [weak self] signal in self?.received(signal) }
        // Blocked before anything else happens (a Bluetooth name lookup may take a while): a stop
        // signal waits in the signalfd and ends the run once the loop turns.
        try environment.signals.watch(Self.stopSignals, received)
        let link = try environment.makeLink(config, loop)
        let events = RunEvents()
        self.events = events
        let bridge = Bridge(
            settings: config.drive, link: link, loop: loop, logger: logger, events: events,
            sessionLimit: config.kiosk.sessionLimit)
        bridge.lowBattery = config.car.lowBattery.map(LowBatteryAlarm.init(rule:))
        self.bridge = bridge
        let model = RunViewModel(of: bridge)
        self.model = model
        events.subscribe(model)
        let feedback = FeedbackService(config: config, loop: loop, events: events, logger: logger)
        events.subscribe(feedback)

        let terminal = TerminalService(
            environment: environment, bridge: bridge, model: model, sink: sink, logger: logger,
            steerStepDegrees: config.keyboard.steerStepDegrees, wantsKeyboard: options.keyboard && config.keyboard.enabled,
            wantsView: options.view)
        terminal.onQuit = { [weak self] in self?.stop(reason: "quit key", code: 0) }
        terminal.onGone = { [weak self] reason in
            self?.bridge?.apply(.inputLost)
            self?.stop(reason: reason, code: 0)
        }
        terminal.isStopping = { [weak self] in self?.stopping ?? true }
        self.terminal = terminal
        events.subscribe(terminal)
        let inputs = InputService(config: config, options: options, loop: loop, bridge: bridge, model: model, logger: logger)
        inputs.onReplayFinished = { [weak self] in self?.stop(reason: "replay finished", code: 0) }

        var services: [any RunService] = [
            terminal,
            SignalService(Self.jobControlSignals, from: environment.signals, to: received),
        ]
        services += extensions.map { ExtensionService($0, bridge: bridge, model: model, loop: loop) }
        services += [LinkService(bridge: bridge), feedback, inputs] as [any RunService]
        if let notifier = try environment.makeSystemdNotifier(loop) {
            let systemd = SystemdService(notifier: notifier, model: model, logger: logger)
            events.subscribe(systemd)
            services.append(systemd)
        }
        let group = ServiceGroup(services)
        self.services = group
        try group.start()
        #if DEBUG
        hangLoopForTests()
        #endif
    }

    /// After the loop ended: the services stopped in reverse order, the view's closing line
    /// written; returns the exit code.
    public func finish() -> Int32 {
        terminal?.finalText = "carbridge: stopped; \(bridge?.framesSent ?? 0) frames sent\r\n"
        services?.stop()
        events?.removeAll()
        return exitCode
    }

    /// Asks the session to end: engine off flushed to the car, then the loop stops.
    public func stop(reason: String, code: Int32) {
        guard !stopping, let bridge else { return }
        stopping = true
        exitCode = code
        services?.shutdownBegan()
        bridge.shutdown(reason: reason, flushWithin: options.shutdown.flushWindow) { [weak self] in self?.loop.stop() }
        // Never hang on a stuck link: give up after the flush window and a margin.
        loop.schedule(after: options.shutdown.hardStop) { [weak self] in self?.loop.stop() }
    }

    #if DEBUG
    /// Debug builds only, for the watchdog's end-to-end test: `CARBRIDGE_TEST_HANG_AFTER_MS=N` makes the
    /// event loop hang for good N ms after it starts (a warning says so), as a bug would.
    private func hangLoopForTests() {
        guard let text = JournalStream.environment("CARBRIDGE_TEST_HANG_AFTER_MS"), let ms = Int(text), ms >= 0 else { return }
        loop.schedule(after: .milliseconds(ms)) { [logger] in
            logger.warning("CARBRIDGE_TEST_HANG_AFTER_MS: the event loop hangs now (a debug build's test hook)")
            while true { sleep(60) }
        }
    }
    #endif

    private func received(_ signal: Int32) {
        switch signal {
        case SIGTSTP, SIGTTIN, SIGTTOU: suspend(with: signal)
        case SIGCONT: terminal?.continued()
        default: stop(reason: Self.signalName(signal), code: 0)
        }
    }

    /// A job-control stop: the stop frame flushed (at most `shutdown.suspendFlush`), the terminal given back, then
    /// the process really stops with `signal`; it goes on here after SIGCONT.
    private func suspend(with signal: Int32) {
        guard !stopping, !suspending, let bridge else { return }
        suspending = true
        bridge.suspend(flushWithin: options.shutdown.suspendFlush) { [weak self] _ in
            guard let self else { return }
            self.suspending = false
            guard !self.stopping else { return }  // a stop signal came meanwhile: exit instead
            self.terminal?.release()
            self.environment.jobControl.stopProcess(with: signal)
            self.terminal?.continued()
        }
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        case SIGQUIT: return "SIGQUIT"
        default: return "signal \(signal)"
        }
    }
}
