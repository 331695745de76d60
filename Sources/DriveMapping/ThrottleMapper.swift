/// Turns an analog trigger (0…1) into a speed: a multiple of 10, capped by the maximum speed
/// (fed to the drive machine as `Control.setSpeed`).
///
/// `speed = round(v' × fullScaleSpeed / 10) × 10`, capped at `maxSpeed` (and 240), where v' is the
/// trigger value after a deadzone rescaled so full travel still reaches full scale:
/// `v' = (v − dz)/(1 − dz)`, 0 inside the deadzone.
public struct ThrottleMapper: Hashable, Sendable {
    /// The tunables (config `[throttle]`).
    public struct Settings: Hashable, Sendable {
        /// The `EV_ABS` code of the trigger (default `ABS_RZ` = 5, the right trigger of most pads).
        public var axisCode: UInt16
        /// Trigger travel ignored at rest, 0…<1 (default 0.05).
        public var deadzone: Double
        /// The speed at full travel (default 240).
        public var fullScaleSpeed: Int
        /// The cap (config `max_speed`; default 240).
        public var maxSpeed: Int

        /// Creates settings; every parameter has a default.
        public init(axisCode: UInt16 = 5, deadzone: Double = 0.05, fullScaleSpeed: Int = 240, maxSpeed: Int = 240) {
            self.axisCode = axisCode
            self.deadzone = deadzone
            self.fullScaleSpeed = fullScaleSpeed
            self.maxSpeed = maxSpeed
        }
    }

    /// The tunables.
    public var settings: Settings

    /// Creates a mapper.
    public init(settings: Settings = .init()) { self.settings = settings }

    /// The speed for trigger value `value` (0…1; values outside are clamped, non-finite give 0).
    public func speed(for value: Double) -> Int {
        guard value.isFinite else { return 0 }
        let dz = settings.deadzone.isFinite ? MathSupport.clamp(settings.deadzone, 0, 0.99) : 0
        let v = MathSupport.clamp(value, 0, 1)
        guard v > dz else { return 0 }
        let scaled = (v - dz) / (1 - dz)
        let fullScale = Double(max(0, min(settings.fullScaleSpeed, 240)))
        let steps = Int((scaled * fullScale / 10).rounded())
        let cap = max(0, min(settings.maxSpeed, 240)) / 10 * 10
        return min(steps * 10, cap)
    }
}
