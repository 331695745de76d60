import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveSystem
import DriveTerminal
import Glibc
import Logging

/// `carbridge monitor`'s job: the input devices the config picks (or a replay), mapped exactly as
/// `carbridge run` maps them, printed one line per input frame with the controls it gave and the frame
/// a car would be sent by its own `DriveMachine` (engine off at the start, as the car is).
///
/// Every line goes to `output` (the command writes it to stdout). `run()` returns when the loop stops:
/// a signal the caller wired to `loop.stop()`, `stop()`, or the end of a replay.
public final class MonitorSession {
    public struct Options {
        /// Print every accelerometer sample, not at most 5 per second.
        public var printEverySample = false
        /// Monitor this recording instead of live devices; `replayName` names it in messages.
        public var replay: EvemuRecording?
        public var replayName = "the recording"
        public init() {}
    }

    /// The config in effect (an accelerometer replay switches steering to tilt).
    public let config: CarbridgeConfig
    private let options: Options
    private let loop: EventLoop
    private let output: (String) -> Void
    private let inputs: InputCoordinator
    private let printer: MonitorPrinter

    public init(
        config: CarbridgeConfig, options: Options = Options(), loop: EventLoop, logger: Logger,
        output: @escaping (String) -> Void
    ) throws {
        var config = config
        if let recording = options.replay, recording.info.isAccelerometer, config.steering.source != .tilt {
            output("monitor: \(options.replayName) is an accelerometer recording: steering by tilt for this session")
            config.steering.source = .tilt
        }
        self.config = config
        self.options = options
        self.loop = loop
        self.output = output
        inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        let printer = MonitorPrinter(config: config, loop: loop, printEverySample: options.printEverySample, output: output)
        self.printer = printer
        inputs.onFrame = { frame, role, source in printer.frame(frame, role: role, source: source) }
        inputs.onLayout = { source, layout in
            printer.flush()
            printer.standardNames[source] = (layout.keyNames, layout.axisNames)
            output("  layout of \(source): \(layout.summary)")
        }
        // Hands-free controls are worked out against the (would-be) car's state: the monitor's own machine's,
        // handed back to the inputs after each control as a run's bridge publishes its state.
        let coordinator = inputs
        inputs.onControl = { [unowned coordinator] control in
            printer.control(control)
            coordinator.receive(.step(DriveStep(control: control, state: printer.driveState, time: loop.now())))
        }
        inputs.onDeviceChange = { change in
            printer.flush()
            output(change.opened ? "+ \(change.description)" : "- \(change.description) gone (the car would stop)")
        }
        inputs.onCalibrate = { neutrals in printer.calibrated(neutrals) }
    }

    /// Prints the summary, starts the replay or the udev watch, and runs the loop until it stops.
    public func run() throws {
        output("monitor: \(Self.summary(config)); Ctrl-C stops")
        if let recording = options.replay {
            inputs.onReplayFinished = { [printer, output, loop] in
                printer.flush()
                printer.control(.inputLost, note: "end of recording")
                printer.flush()
                output("monitor: replay finished")
                loop.stop()
            }
            inputs.startReplay(recording)
        } else {
            do {
                try inputs.startWatching()
            } catch {
                throw CarbridgeError(
                    "cannot watch udev for input devices (\(error)); without udev there is no hotplug. "
                        + "Monitor a recording instead: carbridge monitor --replay FILE")
            }
        }
        defer { inputs.stop() }
        try loop.run()
        printer.flush()
    }

    /// Stops the loop (`run()` returns).
    public func stop() { loop.stop() }

    /// One line on what is mapped: steering, hysteresis, buttons.
    public static func summary(_ config: CarbridgeConfig) -> String {
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
        case .board:
            text = "steering by board (deadzone \(config.board.deadzone), full scale \(config.board.fullScale))"
        case .wheel:
            text = "steering by wheel (\(steering.axisX), lock \(steering.wheelLockDegrees)°, full steering at "
                + "±\(steering.wheelRangeDegrees)°)"
        }
        text += ", hysteresis \(config.drive.hysteresisDegrees)°"
        if !config.throttle.axis.isEmpty { text += ", throttle \(config.throttle.axis)" }
        if !config.throttle.brakeAxis.isEmpty { text += ", brake \(config.throttle.brakeAxis)" }
        if config.throttle.invert { text += " (released at the maximum)" }
        switch config.throttle.source {
        case .trigger: break
        case .tilt:
            text += ", throttle by pitch (axes \(config.throttle.pitchAxes), neutral \(config.throttle.neutralDegrees)°, "
                + "deadzone \(config.throttle.deadzoneDegrees)°, full \(config.throttle.fullDegrees)°)"
        case .board: text += ", throttle by board"
        }
        let buttons = config.buttons.map { "\($0.button)=\($0.action.rawValue)" }
            + config.longPressButtons.map { "long \($0.button)=\($0.action.rawValue)" }
        text += "; buttons " + (buttons.isEmpty ? "none" : buttons.joined(separator: " "))
        return text
    }
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
    private let output: (String) -> Void
    private var pending: Pending?
    /// Each pad's standard names by code (from its GameControllerDB layout), by source name.
    var standardNames: [String: (keys: [UInt16: [String]], axes: [UInt16: [String]])] = [:]
    private var lastSamplePrinted: Instant?

    /// The monitor's machine's state (what a connected car would be doing).
    var driveState: DriveState { machine.state }

    init(config: CarbridgeConfig, loop: EventLoop, printEverySample: Bool, output: @escaping (String) -> Void) {
        formatter = MonitorFormatter(hysteresisDegrees: config.drive.hysteresisDegrees, resolver: EventCodeNames())
        machine = DriveMachine(settings: config.drive)
        // No car here: the monitor shows what a connected car would get (its handshake is not shown).
        _ = machine.handle(.linkUp, at: loop.now())
        self.loop = loop
        self.start = loop.now()
        self.printEverySample = printEverySample
        self.configFile = config.file
        self.output = output
    }

    func frame(_ frame: InputFrame, role: DeviceRole, source: String) {
        flush()
        let names = standardNames[source]
        let raw = role == .board
            ? formatter.describeBoard(frame)
            : formatter.describe(frame, keyNames: names?.keys ?? [:], axisNames: names?.axes ?? [:])
        pending = Pending(time: loop.now(), source: source, role: role, raw: raw)
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

    /// The calibrate button: each neutral (the roll's, a tilt throttle's pitch's) printed and, with
    /// --config, saved as `carbridge run` saves them.
    func calibrated(_ neutrals: TiltNeutrals) {
        flush()
        for (key, degrees) in neutrals.configValues {
            let setting = "[\(key.table)] \(key.name) = \(ConfigFileEditor.roundedNeutral(degrees))"
            guard let file = configFile else {
                output("calibrate: \(setting) (not saved: no --config file)")
                continue
            }
            do {
                try ConfigFileEditor.saveNeutral(degrees, file: file, resolver: EventCodeNames(), key: key)
                output("calibrate: \(setting), saved in \(file)")
            } catch {
                output("calibrate: \(setting), but it could not be saved in \(file): \(error)")
            }
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
        var text = CFormat.double("%8.3f  ", seconds)
            + formatter.line(source: line.source, raw: line.raw, controls: line.controls)
        if !line.frames.isEmpty { text += "  ⇒ " + line.frames.joined(separator: " ") }
        output(text)
    }
}
