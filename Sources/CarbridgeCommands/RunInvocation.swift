import ArgumentParser
import CarSim
import DriveConfig
import DriveRuntime
import Glibc
import Logging

/// What a `carbridge run` command line asks for, as plain values (`RunCommand.invocation`), and how it runs.
struct RunInvocation {
    /// `--config`: the config file, or nil for the built-in defaults.
    var configPath: String?
    /// `--log-level`.
    var logLevel: Logger.Level = .info
    /// The flags that override config keys, in the order they are applied.
    var overrides: [ConfigOverride] = []
    /// Not `--no-keyboard`.
    var keyboard = true
    /// Not `--no-view`.
    var view = true
    /// `--replay`: an evemu recording to drive from.
    var replay: String?

    /// Runs the session until it stops; throws a config or runtime error, or `ExitCode` for a run
    /// that ended with a non-zero status.
    func run() throws {
        var config = try CommonOptions.loadConfig(path: configPath)
        for override in overrides {
            override.apply(to: &config)
        }
        if let problem = config.dashboard.problem { throw ValidationError("--dashboard: \(problem)") }
        // The dashboard's code (Hummingbird, SwiftNIO) is only in `carbridge-dashboard`: a run with the
        // dashboard on becomes that program (the same command line, the same process), before it has
        // opened, started or logged anything; a run without it never maps a page of that code.
        let makeDashboard = config.dashboard.listen == nil ? nil : try DashboardBuild.dashboardFactory()
        let sink = LogSink()
        let logger = CommonOptions.makeLogger(label: "carbridge", sink: sink, level: logLevel)

        var options = RunSession.Options()
        options.keyboard = keyboard
        options.view = view
        if let replay {
            options.replay = try loadRecording(replay)
        }
        // Process-wide, so the executable's: a car or a browser that hangs up makes a write fail
        // with EPIPE (handled where it happens) instead of killing the process before the car stops.
        signal(SIGPIPE, SIG_IGN)
        let session = RunSession(config: config, options: options, environment: try .process(links: .withSimulatedCar), logger: logger, sink: sink)
        // The dashboard's server (and its threads) exists only when it is enabled.
        if let makeDashboard { session.extensions.append(makeDashboard(config, logger)) }
        let code = try session.run()
        if code != 0 { throw ExitCode(code) }
    }
}

extension LinkFactory {
    /// Every link, the simulated car (`sim`) included.
    static var withSimulatedCar: LinkFactory { LinkFactory(simulatedCar: { loop, encoder in
        SimulatedCarLink(simulatedOn: loop, encoder: encoder)
    }) }
}
