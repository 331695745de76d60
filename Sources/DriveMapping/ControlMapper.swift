import DriveCore

/// Turns normalised input frames into drive controls: stick or tilt steering, an analog throttle,
/// and mapped buttons (with long-press and repeat timing). Pure and time-driven like `DriveMachine`:
/// `handle` each frame, call `tick(at:)` at `nextDeadline`.
///
/// - Keys (`EV_KEY`) of every role and bound axis directions (hats) go through `ButtonGestures`.
/// - `.gamepad`: the stick axes (`AxisMapper`) give `.steer(θ)`; the throttle axis gives `.setSpeed`.
/// - `.accelerometer`: `frame.acceleration` through `TiltMapper` gives `.steer(θ)`.
/// - `.steer` is emitted only when θ moved at least `steerResolutionDegrees` (default 0.5°) from the
///   last emitted θ, or when it reaches exactly 0 or ±90 (centre and full lock are never swallowed).
/// - `.setSpeed` is emitted only when the quantised speed changes.
/// - The `calibrate` action makes the last gravity sample straight ahead, emits `.calibrate` and, when
///   a sample is known, the resulting `.steer`.
public struct ControlMapper {
    /// Everything the mapper needs from the config.
    public struct Settings {
        /// Stick steering; nil = the stick does not steer.
        public var stick: AxisMapper.Settings?
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

        /// Creates settings; by default the stick steers in `.x` mode and nothing else is mapped.
        public init(
            stick: AxisMapper.Settings? = .init(), tilt: TiltMapper.Settings? = nil,
            throttle: ThrottleMapper.Settings? = nil, buttons: ButtonMap = .init(),
            gestures: ButtonGestures.Settings = .init(), steerResolutionDegrees: Double = 0.5
        ) {
            self.stick = stick
            self.tilt = tilt
            self.throttle = throttle
            self.buttons = buttons
            self.gestures = gestures
            self.steerResolutionDegrees = steerResolutionDegrees
        }
    }

    private let stick: AxisMapper?
    private var tilt: TiltMapper?
    private let throttle: ThrottleMapper?
    private let steerResolutionDegrees: Double
    private var gestures: ButtonGestures
    private let watchedAxisCodes: Set<UInt16>

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
        tilt = settings.tilt.map { TiltMapper(settings: $0) }
        throttle = settings.throttle.map { ThrottleMapper(settings: $0) }
        let resolution = settings.steerResolutionDegrees
        steerResolutionDegrees = resolution.isFinite ? max(0, resolution) : 0.5
        gestures = ButtonGestures(map: settings.buttons, settings: settings.gestures)
        watchedAxisCodes = settings.buttons.boundAxisCodes
    }

    /// True when `frame` carries a gravity vector tilt steering can use (finite, not zero on the tilt
    /// axes): only those count as an accelerometer's samples for the input-loss watchdog.
    public func isUsableTiltSample(_ frame: InputFrame) -> Bool {
        guard let gravity = frame.acceleration else { return false }
        if let tilt { return tilt.rawRollDegrees(gravity) != nil }
        return gravity.x.isFinite && gravity.y.isFinite && gravity.z.isFinite
            && (gravity.x != 0 || gravity.y != 0 || gravity.z != 0)
    }

    /// The tilt's neutral roll in degrees (after calibration), nil without tilt steering.
    public var tiltNeutralDegrees: Double? { tilt?.settings.neutralDegrees }

    /// The earliest instant `tick` has work (long press, repeat); nil when none.
    public var nextDeadline: Instant? { gestures.nextDeadline }

    /// Maps one frame from a device with `role`; the frame's time is "now".
    public mutating func handle(_ frame: InputFrame, role: DeviceRole) -> [MappedEvent] {
        let now = frame.time
        var events: [MappedEvent] = []
        for key in frame.keys {
            let input = ButtonInput.key(key.code)
            let produced = key.pressed
                ? gestures.press(input, role: role, at: now) : gestures.release(input, role: role, at: now)
            events += handleCalibration(produced, at: now)
        }
        var stickMoved = false
        for axis in frame.axes {
            if watchedAxisCodes.contains(axis.code) {
                events += handleAxisDirections(code: axis.code, value: axis.value, role: role, at: now)
            }
            guard role == .gamepad else { continue }
            if let stick, axis.code == stick.settings.xAxisCode { stickX = axis.value; stickMoved = true }
            if let stick, axis.code == stick.settings.yAxisCode { stickY = axis.value; stickMoved = true }
            if let throttle, axis.code == throttle.settings.axisCode {
                let speed = throttle.speed(for: axis.value)
                if speed != lastSpeed {
                    lastSpeed = speed
                    events.append(.control(.setSpeed(speed)))
                }
            }
        }
        if stickMoved, let stick {
            events += steer(stick.angleDegrees(x: stickX, y: stickY))
        }
        if role == .accelerometer, let gravity = frame.acceleration, tilt != nil {
            lastGravity = gravity
            if let theta = tilt?.update(gravity: gravity, at: now) { events += steer(theta) }
        }
        return events
    }

    /// Fires due long presses and repeats.
    public mutating func tick(at now: Instant) -> [MappedEvent] {
        handleCalibration(gestures.tick(at: now), at: now)
    }

    /// The device with `role` went away: forget its held buttons (a held dead-man is released),
    /// the last steer/speed sent (the next sample is sent again) and, for an accelerometer, the filter history.
    public mutating func deviceLost(role: DeviceRole) -> [MappedEvent] {
        if role == .accelerometer {
            tilt?.reset()
            lastGravity = nil
        }
        if role == .gamepad {
            stickX = 0
            stickY = 0
            lastSpeed = nil
        }
        lastSteerDegrees = nil
        return gestures.releaseAll(role: role)
    }

    /// Emits `.steer(θ)` if θ moved enough since the last one.
    private mutating func steer(_ theta: Double) -> [MappedEvent] {
        guard theta.isFinite else { return [] }
        if let last = lastSteerDegrees {
            let isEndpoint = theta == 0 || abs(theta) == 90
            let movedEnough = abs(theta - last) >= steerResolutionDegrees
            guard theta != last, movedEnough || isEndpoint else { return [] }
        }
        lastSteerDegrees = theta
        return [.control(.steer(theta))]
    }

    /// Turns an axis value into presses/releases of its two bound directions.
    private mutating func handleAxisDirections(code: UInt16, value: Double, role: DeviceRole, at now: Instant) -> [MappedEvent] {
        var events: [MappedEvent] = []
        // Releases first, so a hat flipping from − to + releases − before pressing +.
        for positive in [false, true] {
            let input = ButtonInput.axisDirection(code: code, positive: positive)
            if gestures.isHeld(input, role: role), !ButtonInput.isPressed(positive: positive, value: value) {
                events += gestures.release(input, role: role, at: now)
            }
        }
        for positive in [false, true] {
            let input = ButtonInput.axisDirection(code: code, positive: positive)
            if !gestures.isHeld(input, role: role), ButtonInput.isPressed(positive: positive, value: value) {
                events += gestures.press(input, role: role, at: now)
            }
        }
        return handleCalibration(events, at: now)
    }

    /// Applies `.calibrate` events to the tilt mapper (and follows each with the new θ).
    private mutating func handleCalibration(_ events: [MappedEvent], at now: Instant) -> [MappedEvent] {
        guard events.contains(.calibrate) else { return events }
        var result: [MappedEvent] = []
        for event in events {
            result.append(event)
            guard event == .calibrate, let gravity = lastGravity, tilt != nil else { continue }
            tilt?.calibrate(from: gravity)
            if let theta = tilt?.update(gravity: gravity, at: now) { result += steer(theta) }
        }
        return result
    }
}
