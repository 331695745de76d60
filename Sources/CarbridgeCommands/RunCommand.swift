import ArgumentParser
import DriveConfig

/// `carbridge run`: the main job.
struct RunCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Drive the car: read the inputs, run the state machine, stream frames to the link.",
        discussion: """
            With no link configured, run drives the built-in simulated car, so it works anywhere.
            When stdin is a terminal the keyboard drives and a live view is shown:
              e engine on/off     ↑ or +  Speed+      ↓ or -  Speed-      g  gear (forward/reverse)
              ← →  steer by steer_step_deg (default 20°)   c  centre   1-5  F1-F5   q  quit
            Frames follow the car protocol: T,A,S,D (e.g. M,0,40,1), repeated every period_ms while \
            the speed is above 0, E,0,0,0 when the engine goes off.

            Stopping: q, SIGINT, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\\) send E,0,0,0 (if the engine is \
            on) and flush it to the car before exiting 0; Ctrl-Z sends the stop frame before \
            suspending. Lost input stops the car; a lost link resets the speed to 0 and reconnects, \
            and every connection starts by stopping the car. It moves again only when you act.

            The frames, when each is sent and every safety rule (lost input, lost or stalled link, \
            [link] max_in_flight and stall_timeout_ms): docs/protocol.md, §5 and §6.

            Flags override the config file.
            """)

    @OptionGroup var common: CommonOptions

    // The flags that override config keys (`RunConfigFlag`: each value is read by the key's declaration,
    // with the config file's ranges, rounding and messages). Their help is built once: argument-parser
    // makes a `RunCommand` each time it looks at the arguments (four times in one parse of `run`).
    private static let linkHelp = ArgumentHelp(RunConfigFlag.link.key.flagHelp, valueName: "url")
    private static let maxSpeedHelp = ArgumentHelp(RunConfigFlag.maxSpeed.key.flagHelp, valueName: "speed")
    private static let periodHelp = ArgumentHelp(RunConfigFlag.periodMs.key.flagHelp, valueName: "ms")
    private static let idleTimeoutHelp = ArgumentHelp(RunConfigFlag.idleTimeout.key.flagHelp, valueName: "seconds")
    private static let terminatorHelp = ArgumentHelp(RunConfigFlag.terminator.key.flagHelp, valueName: "name")

    @Option(name: .long, help: Self.linkHelp, transform: RunConfigFlag.link.parse)
    var link: ConfigOverride?

    @Option(name: .long, help: Self.maxSpeedHelp, transform: RunConfigFlag.maxSpeed.parse)
    var maxSpeed: ConfigOverride?

    @Option(name: .long, help: Self.periodHelp, transform: RunConfigFlag.periodMs.parse)
    var periodMs: ConfigOverride?

    @Option(name: .long, help: Self.idleTimeoutHelp, transform: RunConfigFlag.idleTimeout.parse)
    var idleTimeout: ConfigOverride?

    @Option(name: .long, help: Self.terminatorHelp, transform: RunConfigFlag.terminator.parse)
    var terminator: ConfigOverride?

    @Flag(name: .long, help: "Do not read the terminal keyboard even when stdin is a terminal.")
    var noKeyboard = false

    @Flag(name: .long, help: "Do not draw the live view; log to stderr instead.")
    var noView = false

    @Option(name: .long, help: ArgumentHelp(
        "Drive from an evemu recording (evemu-record's text output) instead of live devices, with its timing.",
        discussion: """
            The recording goes through exactly the same mapper and state machine as a live device. The run \
            starts it once the link is up and ends when it does: lost input (the stop frame), then E,0,0,0 \
            if the engine is on.
            """,
        valueName: "file"), completion: .file())
    var replay: String?

    @Option(name: .long, help: ArgumentHelp(
        "Serve the web dashboard and /metrics on HOST:PORT (overrides [dashboard] listen), e.g. 127.0.0.1:8080.",
        discussion: "View only unless [dashboard] controls = true; controls on a non-loopback address need [dashboard] token and HTTPS ([dashboard] tls = \"self-signed\", or cert/key) unless [dashboard] allow_http = true. "
            + "With a token, phones join by the QR code the live view and the page show ([dashboard] join, url).",
        valueName: "host:port"), transform: RunConfigFlag.dashboard.parse)
    var dashboard: ConfigOverride?

    /// The run these options ask for.
    var invocation: RunInvocation {
        RunInvocation(
            configPath: common.config, logLevel: common.logLevel,
            overrides: [link, maxSpeed, periodMs, idleTimeout, terminator, dashboard].compactMap { $0 },  // RunConfigFlag's order
            keyboard: !noKeyboard, view: !noView, replay: replay)
    }

    func run() throws { try invocation.run() }
}
