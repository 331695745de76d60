import ArgumentParser
import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import DriveRuntime
import DriveSystem
import DriveTerminal
import Foundation
import Logging

/// `carbridge monitor`: a live mapped view of the input devices, without a car.
struct MonitorCommand: ParsableCommand {
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
        valueName: "file"))
    var replay: String?

    @Flag(name: .long, help: "Print every accelerometer sample, not at most 5 per second.")
    var all = false

    func validate() throws {
        _ = try common.level()
        if let device, device.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("DEVICE must not be empty (omit it to use [devices] gamepad)")
        }
        if replay != nil && device != nil {
            throw ValidationError("give either DEVICE or --replay FILE, not both (a replay is its own device)")
        }
    }

    func run() throws {
        let sink = LogSink()
        let logger = try common.makeLogger(label: "carbridge", sink: sink)
        var config: CarbridgeConfig
        do { config = try common.loadConfig() } catch { throw reportFailure(error) }
        if let device { config.devices.gamepad = DeviceMatch(parsing: device) }
        if let accelerometer { config.devices.accelerometer = DeviceMatch(parsing: accelerometer) }
        if tilt { config.steering.source = .tilt }

        var recording: EvemuRecording?
        if let replay {
            do { recording = try loadRecording(replay) } catch { throw reportFailure(error) }
            if let recording, recording.info.isAccelerometer, config.steering.source != .tilt {
                say("monitor: \(replay) is an accelerometer recording: steering by tilt for this session")
                config.steering.source = .tilt
            }
        }

        let loop: EventLoop
        let inputs: InputCoordinator
        do {
            loop = try EventLoop()
            inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        } catch {
            throw reportFailure(error)
        }
        let printer = MonitorPrinter(config: config, loop: loop, printEverySample: all)
        inputs.onFrame = { frame, role, source in printer.frame(frame, role: role, source: source) }
        inputs.onControl = { control in printer.control(control) }
        inputs.onDeviceChange = { description, added in
            printer.flush()
            say(added ? "+ \(description)" : "- \(description) gone (the car would stop)")
        }
        inputs.onCalibrate = { neutral in printer.calibrated(neutral, logger: logger) }
        try loop.watchSignals([SIGINT, SIGTERM, SIGHUP]) { _ in loop.stop() }

        say("monitor: \(Self.summary(config)); Ctrl-C stops")
        if let recording {
            inputs.onReplayFinished = {
                printer.flush()
                printer.control(.inputLost, note: "end of recording")
                printer.flush()
                say("monitor: replay finished")
                loop.stop()
            }
            inputs.startReplay(recording)
        } else {
            do {
                try inputs.startWatching()
            } catch {
                throw reportFailure(MonitorError(
                    message: "cannot watch udev for input devices (\(error)); without udev there is no hotplug. "
                        + "Monitor a recording instead: carbridge monitor --replay FILE"))
            }
        }
        do {
            try loop.run()
        } catch {
            inputs.stop()
            throw reportFailure(error)
        }
        printer.flush()
        inputs.stop()
    }

    /// One line on what is mapped: steering, hysteresis, buttons.
    static func summary(_ config: CarbridgeConfig) -> String {
        let steering = config.steering
        var text: String
        switch steering.source {
        case .stick:
            text = "steering by stick (\(steering.mode.rawValue), \(steering.axisX)"
                + (steering.mode == .polar ? "/\(steering.axisY)" : "") + ", deadzone \(steering.deadzone))"
        case .tilt:
            text = "steering by tilt (axes \(steering.tiltAxes), neutral \(steering.neutralDegrees)°, "
                + "sensitivity \(steering.sensitivity))"
        case .none:
            text = "no steering"
        }
        text += ", hysteresis \(config.drive.hysteresisDegrees)°"
        if !config.throttle.axis.isEmpty { text += ", throttle \(config.throttle.axis)" }
        let buttons = config.buttons.map { "\($0.button)=\($0.action.rawValue)" }
            + config.longPressButtons.map { "long \($0.button)=\($0.action.rawValue)" }
        text += "; buttons " + (buttons.isEmpty ? "none" : buttons.joined(separator: " "))
        return text
    }
}

/// A monitor problem the user can act on.
struct MonitorError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Collects each frame with the controls it produced and prints them as one line.
private final class MonitorPrinter {
    private struct Pending {
        let time: Instant
        let source: String
        let role: DeviceRole
        let raw: String
        var controls: [String] = []
        var frames: [String] = []
    }

    private var formatter: MonitorFormatter
    private var machine: DriveMachine
    private let loop: EventLoop
    private let start: Instant
    private let printEverySample: Bool
    private let configFile: String?
    private var pending: Pending?
    private var lastSamplePrinted: Instant?

    init(config: CarbridgeConfig, loop: EventLoop, printEverySample: Bool) {
        formatter = MonitorFormatter(hysteresisDegrees: config.drive.hysteresisDegrees, resolver: EventCodeNames())
        machine = DriveMachine(settings: config.drive)
        // No car here: the monitor shows what a connected car would get (its handshake is not shown).
        _ = machine.handle(.linkUp, at: loop.now())
        self.loop = loop
        self.start = loop.now()
        self.printEverySample = printEverySample
        self.configFile = config.file
    }

    func frame(_ frame: InputFrame, role: DeviceRole, source: String) {
        flush()
        pending = Pending(time: loop.now(), source: source, role: role, raw: formatter.describe(frame))
        // The mapper's controls for this frame arrive synchronously after this call.
        loop.execute { [weak self] in self?.flush() }
    }

    func control(_ control: Control, note: String = "(no frame)") {
        let name = formatter.apply(control)
        let wasOn = machine.state.engineOn
        var frames = machine.handle(control, at: loop.now()).map(\.text)
        if frames.isEmpty && machine.state.engineOn != wasOn {
            frames.append(machine.state.engineOn ? "(engine on, nothing sent yet)" : "(engine off)")
        }
        if pending == nil {
            pending = Pending(time: loop.now(), source: "carbridge", role: .keyboard, raw: note)
            loop.execute { [weak self] in self?.flush() }
        }
        pending?.controls.append(name)
        pending?.frames += frames
    }

    func calibrated(_ neutral: Double, logger: Logger) {
        flush()
        let rounded = ConfigFileEditor.roundedNeutral(neutral)
        guard let file = configFile else {
            say("calibrate: neutral_deg = \(rounded) (not saved: no --config file)")
            return
        }
        do {
            try ConfigFileEditor.saveNeutral(neutral, file: file, resolver: EventCodeNames())
            say("calibrate: neutral_deg = \(rounded), saved in \(file)")
        } catch {
            say("calibrate: neutral_deg = \(rounded), but it could not be saved in \(file): \(error)")
        }
    }

    func flush() {
        guard let line = pending else { return }
        pending = nil
        if line.role == .accelerometer && line.controls.isEmpty && !printEverySample {
            if let last = lastSamplePrinted, line.time.duration(since: last) < .milliseconds(200) { return }
            lastSamplePrinted = line.time
        }
        let seconds = Double(line.time.duration(since: start).nanoseconds) / 1e9
        var text = String(format: "%8.3f  ", seconds)
            + formatter.line(source: line.source, raw: line.raw, controls: line.controls)
        if !line.frames.isEmpty { text += "  ⇒ " + line.frames.joined(separator: " ") }
        say(text)
    }
}
