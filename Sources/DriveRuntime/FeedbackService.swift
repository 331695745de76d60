import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveSystem
import Glibc
import Logging

/// Tells the driver what the car is doing: `FeedbackPlanner` over the run's events (a kiosk turn's warning
/// on a loop timer). Each cue is published (`RunEvent.feedback`: the views list it) and, with
/// `[feedback] rumble` on, played on the rumble motors of the open pads, which this service opens itself
/// when a pad with `FF_RUMBLE` is opened (`RunEvent.device`) and closes when it goes. With
/// `[steering] source = "wheel"` the wheel's centring (`WheelCentring`) is opened the same way and follows
/// the planner's `centring`: on while the engine is on, off when it goes off.
///
/// Each open pad's light and battery (`PadSysfsWorker`, a thread per pad) are opened the same way: the light
/// shows `PadLightPlanner`'s state in its `[feedback] light_…` colour, and a battery at or below
/// `[feedback] pad_low_battery` (`PadBatteryAlarm`) is published as `RunEvent.padBattery`, logged, and turns
/// that pad's light `light_battery_low`. The light's own colour is back when the pad closes or the run stops.
public final class FeedbackService: RunService, RunSubscriber {
    public let name = "feedback"
    private let config: CarbridgeConfig
    private let loop: EventLoop
    private let events: RunEvents
    private let logger: Logger
    private var planner: FeedbackPlanner
    private let timer: DeadlineTimer
    /// The engine and speed of the last state handed to the planner (nil: none yet): a state that only
    /// steers calls for no cue.
    private var toldEngineAndSpeed: (engineOn: Bool, speed: Int)?
    /// The rumble motors of the open pads that have them, by device key.
    private var motors: [String: RumbleMotor] = [:]
    /// The pads whose motors a thread is opening, by device key: which opening it is, so that a motor
    /// arriving after its pad was closed (or closed and opened again) is closed, not used.
    private var motorOpenings: [String: UInt64] = [:]
    private var motorOpeningCount: UInt64 = 0
    /// The centring of the open wheels that have it, by device key.
    private var centrings: [String: WheelCentring] = [:]
    /// The wheels whose centring a thread is opening, by device key (as `motorOpenings`).
    private var centringOpenings: [String: UInt64] = [:]
    /// Whether the centring was last set on (what a centring that opens later is given at once).
    private var centringOn = false
    /// What the pads' lights show, but for each pad's battery.
    private var lights = PadLightPlanner()
    /// The open pads' lights and batteries, by device key.
    private var pads: [String: PadOutputs] = [:]
    /// Closed pads' workers still writing their lights' original values back (waited for at `stop`).
    private var closingWorkers: [PadSysfsWorker] = []
    /// Where the pads' sysfs is and how often batteries are read (a test's fixture tree and pace).
    private let padOptions: PadSysfsWorker.Options
    /// How long `stop` waits for the pads' lights to be put back.
    static let restoreWait: Duration = .seconds(1)

    /// One open pad's light and battery.
    private struct PadOutputs {
        /// Which opening of the pad (a report of an earlier one is ignored).
        var opening: UInt64
        var worker: PadSysfsWorker
        /// The pad in words, for the battery's messages.
        var name: String
        var battery: PadBatteryAlarm
        /// What its light was last asked to show; nil: nothing yet.
        var shown: PadLightState?
        /// False once writing its light failed (left alone from then on).
        var lightsWork = true
    }

    /// Feedback for a run with `config`, publishing its cues to `events`; the pads' lights and batteries are
    /// found under `pads.sysfsRoot` (`/sys`) and read every `pads.batteryInterval` (30 s).
    public init(
        config: CarbridgeConfig, loop: EventLoop, events: RunEvents, logger: Logger,
        pads: PadSysfsWorker.Options = PadSysfsWorker.Options()
    ) {
        self.config = config
        padOptions = pads
        self.loop = loop
        self.events = events
        self.logger = logger
        planner = FeedbackPlanner(maxSpeed: config.drive.speedCeiling, sessionLimit: config.kiosk.sessionLimit)
        timer = DeadlineTimer(loop: loop)
        timer.setAction { [unowned self] in self.tell(self.planner.tick(at: self.loop.now())) }  // its own timer
    }

    public func start() throws {}

    public func stop() {
        timer.cancel()
        motorOpenings.removeAll()
        for motor in motors.values { motor.closeInBackground() }
        motors.removeAll()
        centringOpenings.removeAll()
        for centring in centrings.values { centring.closeInBackground() }
        centrings.removeAll()
        // After the loop: waiting here holds up no frame. A pad's driver that takes longer leaves its colour.
        for pad in pads.values { pad.worker.close() }
        closingWorkers += pads.values.map(\.worker)
        pads.removeAll()
        let deadline = Instant(nanoseconds: MonotonicClock.nanoseconds()).advanced(by: Self.restoreWait)
        for worker in closingWorkers { worker.finish(waitingUntil: deadline) }
        closingWorkers.removeAll()
    }

    public func receive(_ event: RunEvent) {
        switch event {
        case .step(let step):
            // The control first, against the state before it (Speed+ at the cap), then the state it left.
            if let control = step.control, FeedbackPlanner.answers(control) {
                tell(planner.handle(.applied(control), at: step.time))
            }
            // Lost and restored input decide whether the car refuses motion (a light's state); a steer passes by.
            switch step.control {
            case .inputLost?: if lights.handle(.applied(.inputLost)) { updateLights() }
            case .inputRestored?: if lights.handle(.applied(.inputRestored)) { updateLights() }
            default: break
            }
            follow(step.state, at: step.time)
        case .link(let state):
            tell(planner.handle(.link(up: state.isUp), at: loop.now()))
            if lights.handle(.link(up: state.isUp)) { updateLights() }
        case .device(let change):
            guard let node = change.gamepadNode else { return }
            if change.opened {
                openMotor(node, key: change.key)
                openCentring(node, key: change.key)
                openPad(node, key: change.key, name: change.description)
            } else {
                closeMotor(key: change.key)
                closeCentring(key: change.key)
                closePad(key: change.key)
            }
        case .carBattery(let change, let time):
            tell(planner.handle(.carBattery(change), at: time))
        case .carLine, .notice, .logLine, .handsFree, .feedback, .join, .linkStatistics, .padBattery:
            break
        }
    }

    /// Hands the planner `state` when its engine or speed changed (a report that only steers calls for no cue).
    private func follow(_ state: DriveState, at now: Instant) {
        guard toldEngineAndSpeed?.engineOn != state.engineOn || toldEngineAndSpeed?.speed != state.speed else { return }
        toldEngineAndSpeed = (state.engineOn, state.speed)
        tell(planner.handle(.state(state), at: now))
        if lights.handle(.state(state)) { updateLights() }
        if planner.centring != centringOn {
            centringOn = planner.centring
            for centring in centrings.values { centring.set(on: centringOn) }
        }
    }

    /// Publishes `cues` and plays them (one `write` per pad with rumble, never blocking).
    private func tell(_ cues: [FeedbackEvent]) {
        defer { timer.arm(at: planner.nextDeadline) }
        guard !cues.isEmpty else { return }
        let now = loop.now()
        for cue in cues {
            if config.feedback.rumble {
                for motor in motors.values { motor.play(cue.rawValue) }
            }
            events.publish(.feedback(cue, at: now))
        }
    }

    /// Opens the pad's rumble motors when `[feedback] rumble` is on and it has `FF_RUMBLE` (else nothing).
    /// The upload waits for the pad's driver, so it runs on a thread of its own and the motor joins
    /// `motors` when it is done; until then the pad drives without rumble.
    private func openMotor(_ path: String, key: String) {
        guard config.feedback.rumble, config.feedback.strength > 0 else { return }
        motorOpeningCount += 1
        let opening = motorOpeningCount
        motorOpenings[key] = opening
        // Each cue is one of the pad's force-feedback slots (a memoryless driver has 16, some pads fewer), and
        // the uploads wait for the pad: the low-battery cue only when `[car] low_battery` can raise it. It is
        // the last case, so every cue's index is its raw value either way.
        let patterns = FeedbackEvent.allCases.filter { $0 != .batteryLow || config.car.lowBattery != nil }.map(\.pattern)
        RumbleMotor.open(path: path, patterns: patterns, strength: config.feedback.strength, loop: loop) { [weak self] motor in
            guard let self, self.motorOpenings[key] == opening else {
                motor?.closeInBackground()
                return
            }
            self.motorOpenings[key] = nil
            guard let motor else { return }
            self.motors[key] = motor
            self.logger.debug("rumble: \(path) has FF_RUMBLE")
        }
    }

    /// Opens a racing wheel's centring when the wheel steers and `[feedback] centring` is above 0 (else nothing),
    /// on a thread of its own as a motor is; once open it is set to the current state at once (off while the
    /// engine is off, so a wheel left centring by a game is free until the engine goes on).
    private func openCentring(_ path: String, key: String) {
        guard config.steering.source == .wheel, config.feedback.centring > 0 else { return }
        motorOpeningCount += 1
        let opening = motorOpeningCount
        centringOpenings[key] = opening
        WheelCentring.open(path: path, strength: config.feedback.centring, loop: loop) { [weak self] centring in
            guard let self, self.centringOpenings[key] == opening else {
                centring?.closeInBackground()
                return
            }
            self.centringOpenings[key] = nil
            guard let centring else { return }
            self.centrings[key] = centring
            centring.set(on: self.centringOn)
            self.logger.debug("centring: \(path) with \(centring.kind == .spring ? "FF_SPRING" : "FF_AUTOCENTER")")
        }
    }

    private func closeCentring(key: String) {
        centringOpenings[key] = nil
        guard let centring = centrings.removeValue(forKey: key) else { return }
        loop.execute { centring.closeInBackground() }
    }

    /// Starts the pad's light and battery worker when `[feedback] lights` is on or `pad_low_battery` above 0;
    /// its light is asked for the current state at once (shown once the worker found it).
    private func openPad(_ node: String, key: String, name: String) {
        guard config.feedback.lights || config.feedback.padLowBattery > 0 else { return }
        motorOpeningCount += 1
        let opening = motorOpeningCount
        var options = padOptions
        options.lights = options.lights && config.feedback.lights
        options.battery = options.battery && config.feedback.padLowBattery > 0
        let worker = PadSysfsWorker.start(eventNode: node, options: options, loop: loop) { [weak self] report in
            self?.padReported(report, key: key, opening: opening)
        }
        guard let worker else { return }
        pads[key] = PadOutputs(
            opening: opening, worker: worker, name: name, battery: PadBatteryAlarm(threshold: config.feedback.padLowBattery))
        updateLights()
    }

    /// What a pad's worker found or read (ignored when that opening of the pad is closed).
    private func padReported(_ report: PadSysfsWorker.Report, key: String, opening: UInt64) {
        guard let pad = pads[key], pad.opening == opening else { return }
        switch report {
        case .found(let found):
            if let light = found?.lights { logger.debug("lights: \(pad.worker.eventNode) has \(light.summary)") }
            if let battery = found?.battery { logger.debug("battery: \(pad.worker.eventNode) has \(battery)") }
        case .battery(let reading):
            guard let change = pads[key]?.battery.observe(level: reading.level, charging: reading.charging) else { return }
            let event = PadBatteryChange(
                key: key, name: pad.name, level: reading.level, charging: reading.charging, isLow: change == .low)
            if event.isLow {
                logger.warning("\(event)")
            } else {
                logger.info("\(event)")
            }
            events.publish(.padBattery(event))
            updateLights()
        case .lightsFailed(let path, let error):
            pads[key]?.lightsWork = false
            let remedy = error == EROFS
                ? "sysfs is read-only here: a systemd unit needs ReadWritePaths=/sys/devices beside ProtectKernelTunables="
                : "the udev rule udev/70-carbridge.rules lets group carbridge write it"
            let reason = String(cString: strerror(error))
            logger.warning("lights: cannot write \(path) (\(reason)): the pad's light is left alone; \(remedy) (docs/deployment.md, Permissions)")
        }
    }

    /// Asks each pad's light for what it should show, where that changed.
    private func updateLights() {
        guard config.feedback.lights else { return }
        for (key, pad) in pads where pad.lightsWork {
            let state = lights.state(batteryLow: pad.battery.isLow)
            guard state != pad.shown else { continue }
            pads[key]?.shown = state
            pad.worker.show(state.colour(in: config.feedback))
        }
    }

    /// The pad's worker puts its light back and ends on its own thread.
    private func closePad(key: String) {
        guard let pad = pads.removeValue(forKey: key) else { return }
        pad.worker.close()
        closingWorkers.removeAll { $0.isFinished }
        closingWorkers.append(pad.worker)
    }

    private func closeMotor(key: String) {
        motorOpenings[key] = nil
        guard let motor = motors.removeValue(forKey: key) else { return }
        // After the current event: a pad that went away has the car stopped before a thread is started.
        loop.execute { motor.closeInBackground() }
    }
}
