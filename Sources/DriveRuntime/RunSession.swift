import DriveConfig
import DriveCore
import DriveLink
import DriveSystem
import CLinux
import DriveTerminal
import Glibc
import DriveInput
import Logging

/// `carbridge run`: builds the loop, the link, the bridge and the input sources from a
/// config, runs until SIGINT/SIGTERM/SIGHUP/SIGQUIT or `q`, and always ends with the car stopped.
///
/// Job control (SIGTSTP, SIGTTIN, SIGTTOU): the stop frame is flushed to the car first (S := 0,
/// the engine stays on), the terminal is given back to the shell, then the process stops with
/// the same signal. On SIGCONT in the foreground the terminal is raw again and the view redrawn;
/// continued in the background (`bg`), the terminal is left to the shell until carbridge is in the
/// foreground again (`fg`). The link stays up throughout.
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

    private let config: CarbridgeConfig
    private let options: Options
    private let logger: Logger
    private let sink: LogSink
    private let loop: EventLoop
    private var bridge: Bridge!
    /// What the live view shows (kept whether or not the view is up).
    private var model: RunViewModel!
    private var terminal: TerminalMode?
    private var screen: TerminalScreen?
    private var keyboard: KeyboardControls
    private var decoder = TerminalKeyDecoder()
    private var exitCode: Int32 = 0
    private var stopping = false
    /// Between a stop signal and the end of the stop frame's flush.
    private var suspending = false
    /// The terminal was given back for a job-control stop and not taken again yet.
    private var terminalReleased = false
    /// While continued in the background with the terminal given back: the next foreground check.
    private var foregroundCheck: EventLoop.TimerID?
    private var inputs: InputCoordinator?
    /// Started with the run and stopped after it (the web dashboard); set before `run()`.
    public var extensions: [any RunSessionExtension] = []
    /// systemd's notifications (READY, WATCHDOG, STATUS, STOPPING) when run as a `Type=notify` service.
    private var systemd: SystemdNotifier?

    /// Creates a session; nothing runs until `run()`.
    public init(config: CarbridgeConfig, options: Options, logger: Logger, sink: LogSink) throws {
        self.config = config
        self.options = options
        self.logger = logger
        self.sink = sink
        self.loop = try EventLoop()
        self.keyboard = KeyboardControls(steerStepDegrees: config.keyboard.steerStepDegrees)
    }

    /// Runs until asked to stop; returns the process exit code.
    public func run() throws -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT]) { [weak self] signal in
            self?.received(signal)
        }
        let encoder = FrameEncoder(terminator: config.link.terminator)
        let url = try LinkURL(parsing: config.link.url)
        let link = try LinkFactory.make(url: url, loop: loop, encoder: encoder, options: config.link.options)
        let bridge = Bridge(
            settings: config.drive, link: link, loop: loop, logger: logger, sessionLimit: config.kiosk.sessionLimit)
        self.bridge = bridge
        let model = RunViewModel(observing: bridge)
        self.model = model

        defer { restoreTerminal(finalText: "") }
        let interactive = options.keyboard && config.keyboard.enabled && TerminalMode.isTerminal(0)
        if interactive {
            try startKeyboard()
            model.inputs.append("keyboard")
        }
        if interactive && options.view && TerminalMode.isTerminal(1) {
            let screen = try TerminalScreen(fd: 1, loop: loop) { [weak model] in
                guard let model else { return "" }
                let size = TerminalScreen.size(of: 1)
                return RunView.render(model.snapshot, columns: size.columns, rows: size.rows)
            }
            self.screen = screen
            // The view shows the car's lines and the bridge's notices itself (notices as the log
            // would show them); every other log line goes to its notices while it is up.
            let label = logger.label
            model.noticeText = { ConsoleLogHandler.line(level: .notice, label: label, message: $0) }
            sink.divert { [weak model] line in model?.appendNotice(line) }
            bridge.logsReports = false
            model.onChange = { [weak screen] in screen?.setNeedsDisplay() }
            screen.setNeedsDisplay()
        }
        // SIGTTIN/SIGTTOU are job-control stops like SIGTSTP: whoever sends them gets the stop frame
        // first. Blocked, the kernel no longer raises them for carbridge's own terminal access (it
        // does not touch the terminal while the shell has it); until here, started in the background,
        // carbridge stops at its first tcsetattr as any terminal program does, before it connects.
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT, SIGTTIN, SIGTTOU]) { [weak self] signal in
            self?.received(signal)
        }
        for item in extensions { try item.start(bridge: bridge, model: model, loop: loop) }
        defer { for item in extensions { item.stop() } }
        try startInputs(bridge)
        if model.inputs.isEmpty && options.replay == nil {
            logger.notice("no input source: the car stays stopped (stdin is not a terminal and no device is configured)")
        }
        bridge.start()
        if let systemd = SystemdNotifier.forThisProcess(loop: loop) {
            self.systemd = systemd
            systemd.report(model)
            systemd.start()  // READY=1 from the loop's first turn, then WATCHDOG=1 from the loop
            if let interval = systemd.watchdogInterval { logger.info("systemd watchdog: a ping every \(interval)") }
        }
        #if DEBUG
        hangLoopForTests()
        #endif
        do {
            try loop.run()
        } catch {
            // A fatal error with the link up: engine off is still sent before exit.
            logger.error("fatal: \(error)")
            stop(reason: "fatal error", code: 1)
            try? loop.run(until: loop.now().advanced(by: .seconds(2)))
            exitCode = 1
        }
        inputs?.stop()
        restoreTerminal(finalText: "carbridge: stopped; \(bridge.framesSent) frames sent\r\n")
        return exitCode
    }

    /// Asks the session to end: engine off flushed to the car, then the loop stops.
    public func stop(reason: String, code: Int32) {
        guard !stopping, let bridge else { return }
        stopping = true
        exitCode = code
        systemd?.stopping()
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
        case SIGCONT: continued()
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
            self.releaseTerminal()
            Self.stopProcess(with: signal)
            self.continued()
        }
    }

    /// Stops this process with `signal`'s default action, as vim and readline do: the signal is
    /// raised while blocked, then unblocked, so the process stops inside `pthread_sigmask` and goes
    /// on from there after SIGCONT. In an orphaned process group the kernel discards the stop and
    /// this returns at once.
    static func stopProcess(with signal: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        _ = Glibc.signal(signal, SIG_DFL)
        _ = raise(signal)
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        // Continued (SIGCONT): back to the signalfd.
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Gives the terminal back to the shell before a stop: the view's last screen with the cursor
    /// shown, the terminal cooked again, the keyboard no longer read (fd 0 is never non-blocking).
    private func releaseTerminal() {
        guard !terminalReleased else { return }
        terminalReleased = true
        screen?.pause()
        guard let terminal else { return }
        loop.unwatch(0)
        terminal.restore()
    }

    /// SIGCONT (or the stop raised by `suspend` returned): takes the terminal again when this
    /// process is its foreground process group. In the background (`bg`) the shell keeps it
    /// (touching it there would mean SIGTTOU) and the run goes on without the keyboard; bash's
    /// `fg` of a running job sends no SIGCONT, so the foreground is checked every 200 ms until
    /// carbridge has it again (no timer otherwise). The car moves again only when the driver acts:
    /// the suspend left S at 0.
    private func continued(checking: Bool = false) {
        guard !stopping else { return }
        guard terminal != nil || screen != nil else {
            terminalReleased = false
            return
        }
        guard tcgetpgrp(0) == getpgrp() else {
            guard terminalReleased, foregroundCheck == nil else { return }
            if !checking {
                logger.info("continued in the background: the keyboard drives again once carbridge is in the foreground (fg)")
            }
            foregroundCheck = loop.schedule(after: .milliseconds(200)) { [weak self] in
                self?.foregroundCheck = nil
                self?.continued(checking: true)
            }
            return
        }
        if let foregroundCheck { loop.cancel(foregroundCheck) }
        foregroundCheck = nil
        guard terminalReleased else {
            // The SIGCONT that ended carbridge's own stop (already handled), or one after a stop it
            // could not see (SIGSTOP), after which the shell may have reset the terminal: raw again.
            try? terminal?.reenter()
            screen?.setNeedsDisplay()
            return
        }
        terminalReleased = false
        if let terminal {
            do {
                try terminal.reenter()
                decoder = TerminalKeyDecoder()
                try loop.watch(0, for: .readable) { [weak self] _ in self?.readKeyboard() }
            } catch {
                keyboardGone("terminal unusable after resume: \(error)")
                return
            }
        }
        screen?.resume()
        logger.info("resumed: the car moves again when the driver acts")
    }

    private func startInputs(_ bridge: Bridge) throws {
        let wantsDevices = options.replay != nil || (options.devices && !DevicePicker(config: config).entries
            .allSatisfy { $0.match == nil })
        guard wantsDevices else { return }
        let inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        self.inputs = inputs
        inputs.onControl = { [weak bridge] control in bridge?.apply(control) }
        inputs.onDeviceChange = { [weak self] _, _ in
            guard let self else { return }
            self.model.inputs = (self.terminal != nil ? ["keyboard"] : []) + inputs.activeDescriptions
        }
        inputs.onCalibrate = { [weak self] neutral in self?.calibrated(neutral) }
        if let recording = options.replay {
            inputs.onReplayFinished = { [weak self] in
                self?.bridge.apply(.inputLost)
                self?.stop(reason: "replay finished", code: 0)
            }
            // Let the link come up first so the recording's first frames are not lost.
            bridge.onLinkUp = { [weak inputs] in
                guard let inputs, !inputs.isReplaying else { return }
                inputs.startReplay(recording)
            }
        } else {
            do {
                try inputs.startWatching()
            } catch {
                logger.warning("input devices unavailable (\(error)); only the keyboard drives")
            }
        }
    }

    private func calibrated(_ neutral: Double) {
        let rounded = ConfigFileEditor.roundedNeutral(neutral)
        guard let file = config.file else {
            logger.notice("calibrated: neutral_deg = \(rounded) (no config file to save it in; use --config)")
            return
        }
        do {
            try ConfigFileEditor.saveNeutral(neutral, file: file, resolver: EventCodeNames())
            logger.notice("calibrated: neutral_deg = \(rounded), saved in \(file)")
        } catch {
            logger.error("calibrated (neutral_deg = \(rounded)) but could not save it in \(file): \(error)")
        }
    }

    /// Fd 0 stays blocking: `O_NONBLOCK` would be set on the open file description the shell
    /// shares (and left there by a crash). Each readable event reads once, which with VMIN=1 does
    /// not block.
    private func startKeyboard() throws {
        terminal = try TerminalMode(fd: 0)
        try loop.watch(0, for: .readable) { [weak self] _ in self?.readKeyboard() }
    }

    private func readKeyboard() {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count: Int?
        do {
            count = try buffer.withUnsafeMutableBytes { try Syscall.read(0, into: $0) }
        } catch {
            keyboardGone("terminal read failed: \(error)")
            return
        }
        guard let count else { return }
        if count == 0 {
            keyboardGone("terminal closed")
            return
        }
        for key in decoder.decode(buffer[0..<count]) {
            switch keyboard.action(for: key) {
            case .control(let control)?: bridge.apply(control)
            case .quit?: stop(reason: "quit key", code: 0)
            case nil: break
            }
        }
    }

    private func keyboardGone(_ reason: String) {
        loop.unwatch(0)
        bridge.apply(.inputLost)
        stop(reason: reason, code: 0)
    }

    private func restoreTerminal(finalText: String) {
        sink.divert(to: nil)
        bridge?.logsReports = true
        model?.onChange = nil
        screen?.close(finalText: finalText)
        screen = nil
        terminal?.restore()
        terminal = nil
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
