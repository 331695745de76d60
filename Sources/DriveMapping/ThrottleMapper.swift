/// Turns an analog trigger or pedal (0…1) into a speed: a multiple of 10, capped by the maximum speed
/// (fed to the drive machine as `Control.setSpeed`).
///
/// `speed = v × fullScaleSpeed`, rounded down to a multiple of 10 (protocol §4), capped at `maxSpeed`
/// (and 240), where v is the axis value as `carbridge monitor` shows it; at or below `deadzone` the
/// trigger is at rest (0). The value is not rescaled past the dead zone, so the speed follows the value
/// shown. Held values go through `SpeedSteps`, so a trigger resting on a step boundary does not flicker
/// between two speeds.
public struct ThrottleMapper: Hashable, Sendable {
    /// The tunables (config `[throttle]`).
    public struct Settings: Hashable, Sendable {
        /// The `EV_ABS` code of the trigger (default `ABS_RZ` = 5, the right trigger of most pads).
        public var axisCode: UInt16
        /// Trigger travel that counts as rest, 0…<1 (default 0.05).
        public var deadzone: Double
        /// The speed at full travel (default 240).
        public var fullScaleSpeed: Int
        /// The cap (config `max_speed`; default 240).
        public var maxSpeed: Int
        /// The margin a step boundary must be passed by, as a fraction of a step (config `[throttle] hysteresis`).
        public var hysteresis: Double
        /// The `EV_ABS` code of a brake pedal (config `[throttle] brake_axis`); nil = none.
        public var brakeAxisCode: UInt16?
        /// Brake travel (0…1) past which the brake stops the car (default 0.1).
        public var brakeThreshold: Double

        /// Creates settings; every parameter has a default.
        public init(
            axisCode: UInt16 = 5, deadzone: Double = 0.05, fullScaleSpeed: Int = 240, maxSpeed: Int = 240,
            hysteresis: Double = SpeedSteps.defaultHysteresis, brakeAxisCode: UInt16? = nil,
            brakeThreshold: Double = ThrottleMapper.defaultBrakeThreshold
        ) {
            self.brakeAxisCode = brakeAxisCode
            self.brakeThreshold = brakeThreshold
            self.axisCode = axisCode
            self.deadzone = deadzone
            self.fullScaleSpeed = fullScaleSpeed
            self.maxSpeed = maxSpeed
            self.hysteresis = hysteresis
        }
    }

    /// The tunables.
    public var settings: Settings

    /// The brake travel past which the brake stops the car: a tenth, clear of a resting foot and of the
    /// throttle's dead zone, which is where the brake counts as released again.
    public static let defaultBrakeThreshold = 0.1

    /// Creates a mapper.
    public init(settings: Settings = .init()) { self.settings = settings }

    /// Fresh steps with this mapper's hysteresis, for `speed(for:steps:)`.
    public func makeSteps() -> SpeedSteps { SpeedSteps(hysteresis: settings.hysteresis) }

    /// The speed for trigger value `value` on its own, without hysteresis (0…1; values outside are
    /// clamped, non-finite give 0).
    public func speed(for value: Double) -> Int {
        var steps = SpeedSteps(hysteresis: 0)
        return speed(for: value, steps: &steps)
    }

    /// The speed for trigger value `value` with `steps` holding the current step (its hysteresis applies).
    public func speed(for value: Double, steps: inout SpeedSteps) -> Int {
        guard value.isFinite else {
            steps.rest()
            return 0
        }
        let dz = settings.deadzone.isFinite ? MathSupport.clamp(settings.deadzone, 0, 0.99) : 0
        let v = MathSupport.clamp(value, 0, 1)
        guard v > dz else {
            steps.rest()
            return 0
        }
        let fullScale = Double(max(0, min(settings.fullScaleSpeed, 240)))
        let cap = max(0, min(settings.maxSpeed, 240)) / 10
        return steps.update(position: v * fullScale / 10, limit: cap)
    }
}
