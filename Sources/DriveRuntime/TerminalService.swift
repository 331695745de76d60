import DriveCore
import DriveSystem
import DriveTerminal
import Logging

/// The run's terminal: the keyboard (raw mode on the keyboard's fd, keys → controls) and the live
/// view (on the screen's fd), and giving the terminal back to the shell for a job-control stop and
/// taking it again on `fg`.
///
/// Neither fd is ever made `O_NONBLOCK`: that flag lives on the open file description the shell
/// shares (and a crash would leave it there). Each readable event reads once, which with VMIN=1
/// does not block; the view writes through a private non-blocking description (`TerminalScreen`).
///
/// One of the run's subscribers: it redraws the view whenever the view model (told before it) changed.
final class TerminalService: RunService, RunSubscriber {
    let name = "terminal"
    /// What the view writes last when the service stops (the run's closing line).
    var finalText = ""
    /// The `q` key.
    var onQuit: () -> Void = {}
    /// The keyboard's terminal closed or failed: the reason.
    var onGone: (String) -> Void = { _ in }
    /// True once the run is ending (no terminal is taken again then).
    var isStopping: () -> Bool = { false }
    /// The view model's version the view shows.
    private var shownVersion = -1

    private let loop: EventLoop
    private let keyboardFD: Int32
    private let screenFD: Int32
    private let jobControl: any JobControl
    private let bridge: Bridge
    private let model: RunViewModel
    private let sink: LogSink
    private let logger: Logger
    private let wantsKeyboard: Bool
    private let wantsView: Bool
    private var keyboard: KeyboardControls
    private var decoder = TerminalKeyDecoder()
    private var terminal: TerminalMode?
    private var screen: TerminalScreen?
    /// The terminal was given back for a job-control stop and not taken again yet.
    private var released = false
    /// While continued in the background with the terminal given back: the next foreground check.
    private var foregroundCheck: EventLoop.TimerID?
    /// How often the foreground is checked after `bg` (bash's `fg` of a running job sends no SIGCONT).
    static let foregroundCheckInterval: Duration = .milliseconds(200)

    /// The terminal of `environment` for `bridge`: the keyboard when `wantsKeyboard` and the keyboard's
    /// fd is a terminal, the view as well when `wantsView` and the screen's fd is one too.
    init(
        environment: RunEnvironment, bridge: Bridge, model: RunViewModel, sink: LogSink, logger: Logger,
        steerStepDegrees: Double, wantsKeyboard: Bool, wantsView: Bool
    ) {
        self.loop = environment.loop
        self.keyboardFD = environment.keyboardFD
        self.screenFD = environment.screenFD
        self.jobControl = environment.jobControl
        self.bridge = bridge
        self.model = model
        self.sink = sink
        self.logger = logger
        self.keyboard = KeyboardControls(steerStepDegrees: steerStepDegrees)
        self.wantsKeyboard = wantsKeyboard
        self.wantsView = wantsView
    }

    func start() throws {
        guard wantsKeyboard && TerminalMode.isTerminal(keyboardFD) else { return }
        terminal = try TerminalMode(fd: keyboardFD)
        try loop.watch(keyboardFD, for: .readable) { [weak self] _ in self?.readKeyboard() }
        bridge.events.publish(.device(InputDeviceChange(key: "keyboard", description: "keyboard", opened: true)))
        guard wantsView && TerminalMode.isTerminal(screenFD) else { return }
        let screenFD = self.screenFD
        let model = self.model
        let screen = try TerminalScreen(fd: screenFD, loop: loop) {
            let size = TerminalScreen.size(of: screenFD)
            return RunView.render(model.snapshot, columns: size.columns, rows: size.rows)
        }
        self.screen = screen
        // The view shows the car's lines and the bridge's notices itself (notices as the log
        // would show them); every other log line goes to its notices while it is up.
        let label = logger.label
        model.noticeText = { ConsoleLogHandler.line(level: .notice, label: label, message: $0) }
        let events = bridge.events
        sink.divert { line in events.publish(.logLine(line)) }
        bridge.logsReports = false
        screen.setNeedsDisplay()
    }

    func receive(_ event: RunEvent) {
        guard let screen, model.version != shownVersion else { return }
        shownVersion = model.version
        screen.setNeedsDisplay()
    }

    /// The view's last screen and `finalText`, the log back on its fd, the terminal cooked again.
    func stop() {
        if let foregroundCheck { loop.cancel(foregroundCheck) }
        foregroundCheck = nil
        sink.divert(to: nil)
        bridge.logsReports = true
        screen?.close(finalText: finalText)
        screen = nil
        if terminal != nil { loop.unwatch(keyboardFD) }
        terminal?.restore()
        terminal = nil
    }

    /// Gives the terminal back to the shell before a job-control stop: the view's last screen with
    /// the cursor shown, the terminal cooked again, the keyboard no longer read.
    func release() {
        guard !released else { return }
        released = true
        screen?.pause()
        guard let terminal else { return }
        loop.unwatch(keyboardFD)
        terminal.restore()
    }

    /// SIGCONT (or the process's own stop returned): takes the terminal again when this process is
    /// its foreground process group. In the background (`bg`) the shell keeps it (touching it there
    /// would mean SIGTTOU) and the run goes on without the keyboard; bash's `fg` of a running job
    /// sends no SIGCONT, so the foreground is checked every `foregroundCheckInterval` until carbridge
    /// has it again (no timer otherwise). The car moves again only when the driver acts: the
    /// suspend left S at 0.
    func continued(checking: Bool = false) {
        guard !isStopping() else { return }
        guard terminal != nil || screen != nil else {
            released = false
            return
        }
        guard jobControl.isForeground(terminal: keyboardFD) else {
            guard released, foregroundCheck == nil else { return }
            if !checking {
                logger.info("continued in the background: the keyboard drives again once carbridge is in the foreground (fg)")
            }
            foregroundCheck = loop.schedule(after: Self.foregroundCheckInterval) { [weak self] in
                self?.foregroundCheck = nil
                self?.continued(checking: true)
            }
            return
        }
        if let foregroundCheck { loop.cancel(foregroundCheck) }
        foregroundCheck = nil
        guard released else {
            // The SIGCONT that ended carbridge's own stop (already handled), or one after a stop it
            // could not see (SIGSTOP), after which the shell may have reset the terminal: raw again.
            try? terminal?.reenter()
            screen?.setNeedsDisplay()
            return
        }
        released = false
        if let terminal {
            do {
                try terminal.reenter()
                decoder = TerminalKeyDecoder()
                try loop.watch(keyboardFD, for: .readable) { [weak self] _ in self?.readKeyboard() }
            } catch {
                keyboardGone("terminal unusable after resume: \(error)")
                return
            }
        }
        screen?.resume()
        logger.info("resumed: the car moves again when the driver acts")
    }

    private func readKeyboard() {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count: Int?
        do {
            count = try buffer.withUnsafeMutableBytes { try Syscall.read(keyboardFD, into: $0) }
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
            case .quit?: onQuit()
            case nil: break
            }
        }
    }

    private func keyboardGone(_ reason: String) {
        loop.unwatch(keyboardFD)
        onGone(reason)
    }
}
