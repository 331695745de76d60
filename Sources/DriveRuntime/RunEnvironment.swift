import DriveConfig
import DriveCore
import DriveLink
import DriveSystem

/// What `carbridge run` takes from outside: its event loop, its terminal's fds, its signals, job
/// control, how its link is made and whether systemd listens. The executable passes the real
/// process (`process()`); tests pass a manual-clock loop, a pseudo-terminal, signals and job
/// control they drive by hand, and a recording link, and run the very same session.
public struct RunEnvironment {
    /// The loop everything runs on (real or manual clock).
    public var loop: EventLoop
    /// The keyboard's terminal: read when it is a terminal (stdin, fd 0).
    public var keyboardFD: Int32
    /// The live view's terminal: drawn when it is a terminal (stdout, fd 1).
    public var screenFD: Int32
    /// The run's signals.
    public var signals: any SignalSource
    /// Stopping the process and asking who has the terminal.
    public var jobControl: any JobControl
    /// Makes the link to the car from the config.
    public var makeLink: (CarbridgeConfig, EventLoop) throws -> any CarLink
    /// systemd's notifier, when the process runs as a `Type=notify` service; nil otherwise.
    public var makeSystemdNotifier: (EventLoop) throws -> SystemdNotifier?

    /// An environment of the caller's making (tests).
    public init(
        loop: EventLoop, keyboardFD: Int32, screenFD: Int32, signals: any SignalSource, jobControl: any JobControl,
        makeLink: @escaping (CarbridgeConfig, EventLoop) throws -> any CarLink = LinkFactory().make(for:loop:),
        makeSystemdNotifier: @escaping (EventLoop) throws -> SystemdNotifier? = { _ in nil }
    ) {
        self.loop = loop
        self.keyboardFD = keyboardFD
        self.screenFD = screenFD
        self.signals = signals
        self.jobControl = jobControl
        self.makeLink = makeLink
        self.makeSystemdNotifier = makeSystemdNotifier
    }

    /// This process: a loop on CLOCK_MONOTONIC, stdin and stdout, its signals through the loop's
    /// signalfd, `raise`/`tcgetpgrp` job control, the link `link.url` names, and systemd's notifier
    /// when `NOTIFY_SOCKET` is set.
    public static func process(links: LinkFactory) throws -> RunEnvironment {
        let loop = try EventLoop()
        return RunEnvironment(
            loop: loop, keyboardFD: 0, screenFD: 1, signals: ProcessSignals(loop: loop), jobControl: ProcessJobControl(),
            makeLink: links.make(for:loop:), makeSystemdNotifier: SystemdNotifier.forThisProcess(loop:))
    }
}
