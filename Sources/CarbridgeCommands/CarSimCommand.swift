import CarSim
import ArgumentParser
import DriveCore
import DriveLink
import DriveSystem
import Glibc

/// `carbridge car-sim`: a simulated car for people and tests.
struct CarSimCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "car-sim",
        abstract: "Run a simulated car: listen on TCP (and optionally a pty), check every frame, print what the car does.",
        discussion: """
            Every line is parsed strictly against the car protocol (T,A,S,D; A -2…2; S 0…240 in steps \
            of 10; D 0 or 1; T consistent with A and D; E exactly E,0,0,0) and against the rules a car can \
            see (speed restarting from 0 after E, speed steps of 10; a stop is always allowed). Each frame prints what the car would \
            do ("forward-right at 180"); a broken rule prints a VIOLATION line. The car sends a hello and a \
            BAT=<volts> status line every --status-interval seconds (docs/protocol.md §7: the battery starts at \
            --battery and loses 0.01 V a line while the car moves), so the message path back to carbridge is exercised. \
            Like the reference firmware (car/), it fails safe: moving with no valid frame for --failsafe-ms \
            (300) stops it until the next motion frame, and it says CAR failsafe stop.

            Examples:
              carbridge car-sim --listen 127.0.0.1:7000     then: carbridge run --link tcp://127.0.0.1:7000
              carbridge car-sim --pty                        then: carbridge run --link serial:///dev/pts/N
            Stop it with Ctrl-C. Exit status 0, or 1 if any violation was seen and --strict was given.
            """)

    @Option(name: .long, help: ArgumentHelp(
        "TCP address to listen on, HOST:PORT (port 0 = any free port; the bound port is printed).", valueName: "host:port"))
    var listen: String = "127.0.0.1:7000"

    @Flag(name: .long, help: "Also expose a pseudo-terminal as a serial car (its path is printed).")
    var pty = false

    @Flag(name: .long, help: "Do not listen on TCP (use with --pty).")
    var noTcp = false

    @Option(name: .long, help: ArgumentHelp("Seconds between BAT status lines (0 = never).", valueName: "seconds"))
    var statusInterval: Double = 2

    @Option(name: .long, help: ArgumentHelp(
        "The battery's voltage at the start (e.g. 6.5 for a low one, with [car] low_battery = \"BAT<6.8\").",
        valueName: "volts"))
    var battery: Double = 8

    @Option(name: .long, help: ArgumentHelp(
        "The car's failsafe: moving without a valid frame this long stops it (0 = none; docs/protocol.md §8).",
        valueName: "ms"))
    var failsafeMs: Int = 300

    @Flag(name: .long, help: "Accept speed jumps larger than 10 (a car driven by an analog throttle).")
    var allowSpeedJumps = false

    @Flag(name: .long, help: "Print violations and connections only, not every frame.")
    var quiet = false

    @Flag(name: .long, help: "Exit with status 1 if any frame broke a rule.")
    var strict = false

    func validate() throws {
        if noTcp && !pty { throw ValidationError("--no-tcp needs --pty (otherwise the car has no way in)") }
        if !noTcp { _ = try hostAndPort() }
        if !statusInterval.isFinite || statusInterval < 0 || statusInterval > 3600 {
            throw ValidationError("--status-interval: \(statusInterval) must be between 0 and 3600 seconds")
        }
        if !battery.isFinite || battery < 0 || battery > 100 {
            throw ValidationError("--battery: \(battery) must be between 0 and 100 volts")
        }
        if !(0...60_000).contains(failsafeMs) {
            throw ValidationError("--failsafe-ms: \(failsafeMs) must be between 0 (none) and 60000")
        }
    }

    private func hostAndPort() throws -> (String, Int) {
        do throws(HostPortError) {
            let endpoint = try HostPort(parsing: listen)
            return (endpoint.host, endpoint.port)
        } catch {
            throw ValidationError("--listen: \"\(listen)\" is not HOST:PORT (e.g. 127.0.0.1:7000)")
        }
    }

    func run() throws {
        let loop = try EventLoop()
        var configuration = CarSimulator.Configuration()
        if noTcp {
            configuration.listenHost = nil
        } else {
            let (host, port) = try hostAndPort()
            configuration.listenHost = host
            configuration.listenPort = port
        }
        configuration.pty = pty
        configuration.session.statusInterval = statusInterval > 0 ? .milliseconds(Int64(statusInterval * 1000)) : nil
        configuration.session.allowSpeedJumps = allowSpeedJumps
        configuration.session.batteryVolts = battery
        configuration.session.failsafe = failsafeMs > 0 ? .milliseconds(failsafeMs) : nil
        let simulator = CarSimulator(loop: loop, configuration: configuration)
        var violations = 0
        let quiet = self.quiet
        simulator.onFrame = { frame, time in
            if !quiet { say("\(time)  \(Self.column(frame.text, width: 10))  \(CarModel.describe(frame))") }
        }
        simulator.onViolation = { reason, line in
            violations += 1
            say("VIOLATION: \(reason)  [\(line)]")
        }
        simulator.onEvent = { event in say("car-sim: \(event)") }
        try simulator.start()
        if let port = simulator.boundPort { say("car-sim: listening on \(configuration.listenHost ?? "?"):\(port)") }
        if let path = simulator.ptyPath { say("car-sim: serial car on \(path)  (carbridge run --link serial://\(path))") }
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP]) { _ in loop.stop() }
        try loop.run()
        simulator.stop()
        say("car-sim: stopped; \(violations) violation(s)")
        if strict && violations > 0 { throw ExitCode(1) }
    }

    /// `text` cut or padded with spaces to `width` characters (what Foundation's `padding(toLength:)` did).
    static func column(_ text: String, width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }
}
