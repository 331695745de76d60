import DriveCore
import DriveInputModel

/// Turns normalised input frames into drive controls: stick or tilt steering, an analog throttle,
/// and mapped buttons (with long-press and repeat timing). Pure and time-driven like `DriveMachine`:
/// `handle` each frame, call `tick(at:)` at `nextDeadline`.
///
/// - Keys (`EV_KEY`) of every role and bound axis directions (hats) go through `ButtonGestures`.
/// - `.gamepad`: the stick axes (`AxisMapper`) or a racing wheel's axis (`WheelMapper`) give `.steer(θ)`;
///   the throttle axis gives `.setSpeed`; a brake axis pressed past its threshold gives `.setSpeed(0)` and
///   holds the throttle off until it is released and the throttle has been back at rest.
/// - `.accelerometer`: `frame.acceleration` through `TiltMapper` gives `.steer(θ)`.
/// - `.steer` is emitted only when θ moved at least `steerResolutionDegrees` (default 0.5°) from the
///   last emitted θ, or when it reaches exactly 0 or ±90 (centre and full lock are never swallowed).
/// - `.setSpeed` is emitted only when the trigger's speed step changes (`SpeedSteps`: rounded down, with
///   hysteresis); after a stop it did not ask for (lost input, the brake, the engine off, the link, …) the
///   trigger must come back to rest before it gives a speed again (`ThrottleRest`, the rule every analog
///   throttle shares).
/// - The `calibrate` action makes the last gravity sample straight ahead (and, with a tilt throttle, the
///   pitch's standing still), emits `.calibrate` and, when a sample is known, the resulting `.steer`.
public struct ControlMapper {
    /// Everything the mapper needs from the config.
    public struct Settings {
        /// Stick steering; nil = the stick does not steer.
        public var stick: AxisMapper.Settings?
        /// Racing-wheel steering; nil = no wheel.
        public var wheel: WheelMapper.Settings?
        /// Tilt steering; nil = no tilt steering.
        public var tilt: TiltMapper.Settings?
        /// Analog throttle; nil = none.
        public var throttle: ThrottleMapper.Settings?
        /// Button bindings.
        public var buttons: ButtonMap
        /// Long-press and repeat timing.
        public var gestures: ButtonGestures.Settings
        /// Smallest θ change worth a `.steer` (default 0.5°).
        public var steerResolutionDegrees: Double
        /// Hands-free driving (a tilt throttle, a balance board, arming); nil = none.
        public var handsFree: HandsFreeMapper.Settings?

        /// Creates settings; by default the stick steers in `.x` mode and nothing else is mapped.
        public init(
            stick: AxisMapper.Settings? = .init(), tilt: TiltMapper.Settings? = nil,
            throttle: ThrottleMapper.Settings? = nil, buttons: ButtonMap = .init(),
            gestures: ButtonGestures.Settings = .init(), steerResolutionDegrees: Double = 0.5,
            handsFree: HandsFreeMapper.Settings? = nil, wheel: WheelMapper.Settings? = nil
        ) {
            self.handsFree = handsFree
            self.wheel = wheel
            self.stick = stick
            self.tilt = tilt
            self.throttle = throttle
            self.buttons = buttons
            self.gestures = gestures
            self.steerResolutionDegrees = steerResolutionDegrees
        }
    }

    private let stick: AxisMapper?
    private let wheel: WheelMapper?
    private var tilt: TiltMapper?
    private let throttle: ThrottleMapper?
    /// The trigger's current speed step.
    private var throttleSteps: SpeedSteps
    /// The trigger's rest rule: held through a stop, it must not drive the car the moment the stop is over.
    private var throttleRest = ThrottleRest()
    /// True after a stop until the trigger has been back at rest.
    public var throttleNeedsRest: Bool { throttleRest.needsRest }
    /// True while the brake pedal is pressed (past its threshold, until it is back at rest).
    public private(set) var brakeHeld = false
    /// True while the gas was last reported at rest (and before its first report): a brake released then
    /// needs no new rest. Unknown, so false, after lost input.
    private var gasAtRest = true
    private let steerResolutionDegrees: Double
    private var gestures: ButtonGestures
    private let watchedAxisCodes: Set<UInt16>
    /// The hands-free part; nil when nothing is hands-free.
    public private(set) var handsFree: HandsFreeMapper?
    /// The drive machine's state as last seen: the hands-free part works out its controls against it
    /// (the runtime hands it every new state; a toggle such as `.engine` is sent only when it changes the
    /// right way).
    public private(set) var driveState = DriveState.initial

    /// The drive machine's new state (after every step): kept for the hands-free part, and a stop the
    /// throttle did not ask for makes it wait for rest (`ThrottleRest`).
    public mutating func observe(_ state: DriveState) {
        driveState = state
        // Only a stop can start a wait: one comparison per step otherwise.
        if state.speed == 0, throttle != nil { throttleRest.carStopped(speed: 0, asked: lastSpeed) }
    }

    private var stickX = 0.0
    private var stickY = 0.0
    private var lastGravity: Vector3?
    /// The last θ sent as `.steer`; nil before the first.
    public private(set) var lastSteerDegrees: Double?
    /// The last speed sent as `.setSpeed`; nil before the first.
    public private(set) var lastSpeed: Int?

    /// Creates a mapper.
    public init(settings: Settings) {
        stick = settings.stick.map { AxisMapper(settings: $0) }
        wheel = settings.wheel.map { WheelMapper(settings: $0) }
        tilt = settings.tilt.map { TiltMapper(settings: $0) }
        throttle = settings.throttle.map { ThrottleMapper(settings: $0) }
        throttleSteps = throttle?.makeSteps() ?? SpeedSteps()
        let resolution = settings.steerResolutionDegrees
        steerResolutionDegrees = resolution.isFinite ? max(0, resolution) : 0.5
        gestures = ButtonGestures(map: settings.buttons, settings: settings.gestures)
        watchedAxisCodes = settings.buttons.boundAxisCodes
        handsFree = settings.handsFree.map { HandsFreeMapper(settings: $0) }
    }

    /// True when `frame` carries a gravity vector tilt steering can use (finite, not zero on the tilt
    /// axes): only those count as an accelerometer's samples for the input-loss watchdog.
    public func isUsableTiltSample(_ frame: InputFrame) -> Bool { Self.isUsableTiltSample(frame, tilt: tilt) }

    /// `isUsableTiltSample` for a mapper whose tilt steering is `tilt` (nil: none), without a mapper: what a
    /// device's watchdog asks of every sample. Calibration moves only the neutral, which this does not read.
    public static func isUsableTiltSample(_ frame: InputFrame, tilt: TiltMapper?) -> Bool {
        guard let gravity = frame.acceleration else { return false }
        if let tilt { return tilt.rawRollDegrees(gravity) != nil }
        return gravity.x.isFinite && gravity.y.isFinite && gravity.z.isFinite
            && (gravity.x != 0 || gravity.y != 0 || gravity.z != 0)
    }

    /// What a hands-free rider is doing (for the views); nil when nothing is hands-free.
    public var handsFreeReading: HandsFreeReading? { handsFree?.reading }

    /// The tilt's neutral roll in degrees (after calibration), nil without tilt steering.
    public var tiltNeutralDegrees: Double? { tilt?.settings.neutralDegrees }

    /// The tilt throttle's neutral pitch in degrees (after calibration), nil without a tilt throttle.
    public var pitchNeutralDegrees: Double? { handsFree?.pitchSettings?.neutralDegrees }

    /// The roll and pitch neutrals (after calibration); nil when neither steering nor throttle is tilt.
    public var tiltNeutrals: TiltNeutrals? {
        let neutrals = TiltNeutrals(roll: tiltNeutralDegrees, pitch: pitchNeutralDegrees)
        return neutrals.roll == nil && neutrals.pitch == nil ? nil : neutrals
    }

    /// The earliest instant `tick` has work (long press, repeat, hands-free arming); nil when none. Kept up to
    /// date by every call that changes it (`handle`, `tick`, `deviceLost`).
    public private(set) var nextDeadline: Instant?

    /// Works `nextDeadline` out again, at the end of every call that may move it.
    private mutating func updateNextDeadline() {
        nextDeadline = Instant.earliest(gestures.nextDeadline, handsFree?.nextDeadline)
    }

    /// Maps one frame from a device with `role` (the frame's time is "now"), appending the events to
    /// `events`: nothing is allocated when `events` has room (the runtime reuses one array).
    public mutating func handle(_ frame: InputFrame, role: DeviceRole, into events: inout [MappedEvent]) {
        defer { updateNextDeadline() }
        let now = frame.time
        for key in frame.keys {
            let input = ButtonInput.key(key.code)
            let start = events.count
            if key.pressed {
                gestures.press(input, role: role, at: now, into: &events)
            } else {
                gestures.release(input, role: role, at: now, into: &events)
            }
            handleCalibration(&events, from: start, at: now)
        }
        var stickMoved = false
        var wheelValue: Double?
        // The brake first, so that with both pedals in one report the brake wins.
        if role == .gamepad, let throttle, let code = throttle.settings.brakeAxisCode,
           let value = frame.axes.last(where: { $0.code == code })?.value {
            brake(value, throttle: throttle, into: &events)
        }
        for axis in frame.axes {
            // A board's load cells sit on ABS_HAT0X…ABS_HAT1Y: they are weights, not D-pad directions.
            if role != .board, !watchedAxisCodes.isEmpty, watchedAxisCodes.contains(axis.code) {
                handleAxisDirections(code: axis.code, value: axis.value, role: role, at: now, into: &events)
            }
            guard role == .gamepad else { continue }
            if let stick, axis.code == stick.settings.xAxisCode { stickX = axis.value; stickMoved = true }
            if let stick, axis.code == stick.settings.yAxisCode { stickY = axis.value; stickMoved = true }
            if let wheel, axis.code == wheel.settings.axisCode { wheelValue = axis.value }
            if let throttle, axis.code == throttle.settings.axisCode {
                let speed = throttle.speed(for: axis.value, steps: &throttleSteps)
                gasAtRest = speed == 0
                // The brake wins over the gas: nothing but a stop while it is pressed.
                if brakeHeld { continue }
                guard throttleRest.admits(speed) else { continue }
                if speed != lastSpeed {
                    lastSpeed = speed
                    events.append(.control(.setSpeed(speed)))
                }
            }
        }
        if stickMoved, let stick {
            steer(stick.angleDegrees(x: stickX, y: stickY), into: &events)
        }
        if let wheelValue, let wheel {
            steer(wheel.angleDegrees(wheelValue), into: &events)
        }
        // Optional chaining below, not `!= nil` tests: the chained calls work on the mappers in place.
        if role == .accelerometer, let gravity = frame.acceleration {
            // Kept for the calibrate action, which sets the roll's and the pitch's neutral from it.
            lastGravity = gravity
            if let theta = tilt?.update(gravity: gravity, at: now) { steer(theta, into: &events) }
            handsFree?.tilt(
                gravity: gravity, rollDegrees: tilt?.filter.value, at: now, drive: driveState, into: &events)
        }
        if role == .board, !frame.axes.isEmpty,
           let theta = handsFree?.board(axes: frame.axes, at: now, drive: driveState, into: &events) {
            steer(theta, into: &events)
        }
    }

    /// Fires due long presses and repeats, appending the events to `events`.
    public mutating func tick(at now: Instant, into events: inout [MappedEvent]) {
        defer { updateNextDeadline() }
        let start = events.count
        gestures.tick(at: now, into: &events)
        handleCalibration(&events, from: start, at: now)
        handsFree?.tick(at: now, drive: driveState, into: &events)
    }

    /// The device with `role` went away: forget its held buttons (a held dead-man is released),
    /// the last steer/speed sent (the next sample is sent again) and, for an accelerometer, the filter history.
    /// The loss stopped the car, so the trigger must come back to rest before it drives again.
    public mutating func deviceLost(role: DeviceRole) -> [MappedEvent] {
        defer { updateNextDeadline() }
        if throttle != nil {
            throttleRest.stopped()
            throttleSteps.rest()
            brakeHeld = false
            gasAtRest = false
        }
        if role == .accelerometer {
            tilt?.reset()
            lastGravity = nil
        }
        if role == .gamepad {
            stickX = 0
            stickY = 0
            lastSpeed = nil
        }
        handsFree?.deviceLost(role: role)
        lastSteerDegrees = nil
        return gestures.releaseAll(role: role)
    }

    /// The brake pedal at `value` (0…1): pressed past `brakeThreshold` it stops the car (`.setSpeed(0)`, sent on
    /// every press whatever the speed, so a press always ends in the stop frame when moving) and the gas must
    /// come back to rest before it drives again; it counts as released back inside the throttle's dead zone, so
    /// a foot resting near the threshold does not flicker.
    private mutating func brake(_ value: Double, throttle: ThrottleMapper, into events: inout [MappedEvent]) {
        let travel = value.isFinite ? value : 0
        if brakeHeld {
            guard travel <= throttle.settings.deadzone else { return }
            brakeHeld = false
            // A gas pedal that stayed lifted through the braking needs no new rest.
            if gasAtRest { throttleRest.rested() }
            return
        }
        guard travel > throttle.settings.brakeThreshold else { return }
        brakeHeld = true
        throttleRest.stopped()
        throttleSteps.rest()
        lastSpeed = 0
        events.append(.control(.setSpeed(0)))
    }

    /// Emits `.steer(θ)` if θ moved enough since the last one.
    private mutating func steer(_ theta: Double, into events: inout [MappedEvent]) {
        guard theta.isFinite else { return }
        if let last = lastSteerDegrees {
            let isEndpoint = theta == 0 || abs(theta) == 90
            let movedEnough = abs(theta - last) >= steerResolutionDegrees
            guard theta != last, movedEnough || isEndpoint else { return }
        }
        lastSteerDegrees = theta
        events.append(.control(.steer(theta)))
    }

    /// Turns an axis value into presses/releases of its two bound directions.
    private mutating func handleAxisDirections(
        code: UInt16, value: Double, role: DeviceRole, at now: Instant, into events: inout [MappedEvent]
    ) {
        let start = events.count
        // Releases first, so a hat flipping from − to + releases − before pressing +.
        var positive = false
        for _ in 0..<2 {
            let input = ButtonInput.axisDirection(code: code, positive: positive)
            if gestures.isHeld(input, role: role), !ButtonInput.isPressed(positive: positive, value: value) {
                gestures.release(input, role: role, at: now, into: &events)
            }
            positive = true
        }
        positive = false
        for _ in 0..<2 {
            let input = ButtonInput.axisDirection(code: code, positive: positive)
            if !gestures.isHeld(input, role: role), ButtonInput.isPressed(positive: positive, value: value) {
                gestures.press(input, role: role, at: now, into: &events)
            }
            positive = true
        }
        handleCalibration(&events, from: start, at: now)
    }

    /// Applies `.calibrate` events among `events[start...]` to the tilt mapper and the tilt throttle's
    /// pitch (both from the last gravity sample), and follows each with the new θ.
    private mutating func handleCalibration(_ events: inout [MappedEvent], from start: Int, at now: Instant) {
        guard events[start...].contains(.calibrate) else { return }
        let produced = Array(events[start...])
        events.removeSubrange(start...)
        for event in produced {
            events.append(event)
            guard event == .calibrate, let gravity = lastGravity else { continue }
            handsFree?.calibratePitch(from: gravity)
            guard tilt != nil else { continue }
            tilt?.calibrate(from: gravity)
            if let theta = tilt?.update(gravity: gravity, at: now) { steer(theta, into: &events) }
        }
    }
}
