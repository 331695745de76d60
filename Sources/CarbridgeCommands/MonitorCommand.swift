import ArgumentParser
import DriveConfig
import DriveInputModel
import DriveMapping
import DriveRuntime
import DriveSystem
import Glibc

/// `carbridge monitor`: a live mapped view of the input devices, without a car.
struct MonitorCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Show what the input devices do, mapped: raw events → control / θ / range. No car needed.",
        discussion: """
            monitor opens the devices the config picks (exactly as `carbridge run` would: udev hotplug, \
            [devices] matchers, [steering], [buttons], long presses) and prints one line per input frame:

              SECONDS  SOURCE  RAW EVENTS → CONTROLS / θ ANGLE / range A  ⇒ FRAME

            RAW EVENTS are the frame's keys (BTN_SOUTH down), axes (ABS_X -32768 (-1.00): raw value and \
            the normalised one) and accelerations (m/s²). CONTROLS are what the mapper made of them, in \
            the words of the config (engine, speed_up, f1, steer -42.5°, …; — when nothing). θ is the \
            steering angle, A the range −2…2 it gives (with drive.hysteresis_deg). FRAME is what the car \
            would be sent right then by a state machine that starts with the engine off, as the car does \
            (press your engine button first; streaming repeats are not shown).

            Without a matching device, monitor says so and waits: plug one in or pair it and it appears \
            (and unplugging shows INPUT LOST: the car would stop). Accelerometer lines are shown at most \
            5 times a second unless they produce a control (use --all for every sample). A button bound \
            to "calibrate" prints the new neutral and, with --config, saves it as `carbridge run` does.

            Examples:
              carbridge monitor                      the configured (or first) gamepad
              carbridge monitor 045e:028e            a pad by vendor:product
              carbridge monitor "*DualSense*" -c config/gamepad.toml
              carbridge monitor --tilt -c config/tilt-laptop.toml
              carbridge monitor --replay pad.evemu   a recording, with its timing

            Stop with Ctrl-C (exit status 0). A replay ends by itself when the recording does. Exit \
            status 1 on a config error, an unreadable recording, or when udev cannot be watched.
            """)

    @Argument(help: ArgumentHelp(
        "The gamepad to watch: a name glob (\"*X-Box*\"), vendor:product (045e:028e) or a udev path.",
        discussion: "Overrides [devices] gamepad for this session. Default: the config's, else the first gamepad.",
        valueName: "device"))
    var device: String?

    @OptionGroup var common: CommonOptions

    @Flag(name: .long, help: "Steer by tilt for this session (steering.source = \"tilt\"): also opens the accelerometer.")
    var tilt = false

    @Option(name: .long, help: ArgumentHelp(
        "The accelerometer to use with --tilt: a name glob, vendor:product or udev path (overrides [devices] accelerometer).",
        valueName: "device"))
    var accelerometer: String?

    @Option(name: .long, help: ArgumentHelp(
        "Monitor an evemu recording (evemu-record's text output) instead of live devices, with its timing.",
        valueName: "file"), completion: .file())
    var replay: String?

    @Flag(name: .long, help: "Print every accelerometer sample, not at most 5 per second.")
    var all = false

    func validate() throws {
        if let device, device.unicodeScalars.allSatisfy({ $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }) {
            throw ValidationError("DEVICE must not be empty (omit it to use [devices] gamepad)")
        }
        if replay != nil && device != nil {
            throw ValidationError("give either DEVICE or --replay FILE, not both (a replay is its own device)")
        }
    }

    func run() throws {
        let sink = LogSink()
        let logger = common.makeLogger(label: "carbridge", sink: sink)
        var config = try common.loadConfig()
        if let device { config.devices.gamepad = DeviceMatch(parsing: device) }
        if let accelerometer { config.devices.accelerometer = DeviceMatch(parsing: accelerometer) }
        if tilt { config.steering.source = .tilt }

        var options = MonitorSession.Options()
        options.printEverySample = all
        if let replay {
            options.replay = try loadRecording(replay)
            options.replayName = replay
        }
        let loop = try EventLoop()
        let session = try MonitorSession(config: config, options: options, loop: loop, logger: logger, output: say)
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP]) { _ in loop.stop() }
        try session.run()
    }
}
