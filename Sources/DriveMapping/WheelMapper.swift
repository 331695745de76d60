/// Turns a racing wheel's rotation into a steering angle θ in −90…90 degrees (positive is right).
///
/// The wheel's axis (normalised −1…1 over its whole range, no flat) spans `lockDegrees` of rotation lock to
/// lock, so the wheel angle is `value × lockDegrees / 2`; θ reaches ±90 at `rangeDegrees` of wheel angle each
/// side of centre and stays there beyond it: θ = 90 × wheel angle / `rangeDegrees`, clamped. A kiosk visitor
/// then steers the car's full range with a quarter turn, not the one and a quarter turns a 900° wheel has.
public struct WheelMapper: Hashable, Sendable {
    /// The mapping's tunables (config `[steering]` with `source = "wheel"`).
    public struct Settings: Hashable, Sendable {
        /// The `EV_ABS` code of the wheel's axis (default `ABS_X` = 0).
        public var axisCode: UInt16
        /// The wheel's rotation lock to lock, in degrees (config `wheel_lock_deg`, default 900).
        public var lockDegrees: Double
        /// The wheel angle each side of centre that gives θ = ±90 (config `wheel_range_deg`, default 90).
        public var rangeDegrees: Double
        /// Flip the sign of θ (config `invert`).
        public var invert: Bool

        /// Creates settings; every parameter has a default.
        public init(axisCode: UInt16 = 0, lockDegrees: Double = 900, rangeDegrees: Double = 90, invert: Bool = false) {
            self.axisCode = axisCode
            self.lockDegrees = lockDegrees
            self.rangeDegrees = rangeDegrees
            self.invert = invert
        }
    }

    /// The tunables.
    public var settings: Settings

    /// Creates a mapper.
    public init(settings: Settings = .init()) { self.settings = settings }

    /// The wheel angle in degrees for axis value `value` (−1…1; clamped, non-finite gives 0).
    public func wheelDegrees(_ value: Double) -> Double {
        guard value.isFinite, settings.lockDegrees.isFinite, settings.lockDegrees > 0 else { return 0 }
        return MathSupport.clamp(value, -1, 1) * settings.lockDegrees / 2
    }

    /// θ in degrees (−90…90) for axis value `value`; a range that is not positive and finite counts as half
    /// the lock (θ follows the whole rotation).
    public func angleDegrees(_ value: Double) -> Double {
        let wheel = wheelDegrees(value)
        var range = settings.rangeDegrees
        if !(range.isFinite && range > 0) { range = max(settings.lockDegrees / 2, 1) }
        var theta = MathSupport.clamp(wheel / range * 90, -90, 90)
        if settings.invert { theta = -theta }
        return theta == 0 ? 0 : theta  // no −0
    }
}
