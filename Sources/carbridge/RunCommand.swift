import ArgumentParser
import DriveCore
import DriveConfig
import DriveDashboard
import DriveInput
import DriveRuntime
import Glibc

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

    @Option(name: .long, help: ArgumentHelp(
        "Where the car is: sim, stdout, tcp://HOST:PORT, serial:///dev/TTY?baud=N or rfcomm://ADDR[/CHANNEL].",
        valueName: "url"), transform: LinkArgument.parse)
    var link: LinkArgument?

    @Option(name: .long, help: ArgumentHelp("Speed cap for Speed+ (multiple of 10, 10…240).", valueName: "speed"))
    var maxSpeed: Int?

    @Option(name: .long, help: ArgumentHelp("Streaming period in milliseconds (10…1000; default 50).", valueName: "ms"))
    var periodMs: Int?

    @Option(name: .long, help: ArgumentHelp(
        "Engine off after this many seconds without driver activity (0 = never).", valueName: "seconds"))
    var idleTimeout: Double?

    @Option(name: .long, help: ArgumentHelp("Frame terminator: lf, crlf or none.", valueName: "name"))
    var terminator: FrameTerminator?

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
        discussion: "View only unless [dashboard] controls = true; controls on a non-loopback address need [dashboard] token.",
        valueName: "host:port"), transform: DashboardArgument.parse)
    var dashboard: ListenAddress?

    func validate() throws {
        if let maxSpeed, !(10...240).contains(maxSpeed) || maxSpeed % 10 != 0 {
            throw ValidationError("--max-speed: \(maxSpeed) must be a multiple of 10 between 10 and 240")
        }
        if let periodMs, !(10...1000).contains(periodMs) {
            throw ValidationError("--period-ms: \(periodMs) must be between 10 and 1000")
        }
        if let idleTimeout, !(0...86_400).contains(idleTimeout) || !idleTimeout.isFinite {
            throw ValidationError("--idle-timeout: \(idleTimeout) must be between 0 and 86400 seconds")
        }
    }

    func run() throws {
        let sink = LogSink()
        let logger = common.makeLogger(label: "carbridge", sink: sink)
        var config = try common.loadConfig()
        if let link { config.link.url = link.text }
        if let maxSpeed { config.drive.maxSpeed = maxSpeed }
        if let periodMs { config.drive.period = .milliseconds(periodMs) }
        if let idleTimeout { config.drive.idleTimeout = idleTimeout > 0 ? .milliseconds(Int64(idleTimeout * 1000)) : nil }
        if let terminator { config.link.terminator = terminator }
        if let dashboard { config.dashboard.listen = dashboard }
        if let problem = config.dashboard.problem { throw ValidationError("--dashboard: \(problem)") }

        var options = RunSession.Options()
        options.keyboard = !noKeyboard
        options.view = !noView
        if let replay {
            options.replay = try loadRecording(replay)
        }
        let session = try RunSession(config: config, options: options, logger: logger, sink: sink)
        // The dashboard's server (and its threads) exists only when it is enabled.
        if config.dashboard.listen != nil {
            session.extensions.append(Dashboard(
                settings: config.dashboard, maxSpeed: config.drive.maxSpeed, logger: logger, configFile: config.file,
                resolver: EventCodeNames()))
        }
        let code = try session.run()
        if code != 0 { throw ExitCode(code) }
    }
}
