/// Turns a stick's deflection into a steering angle θ in −90…90 degrees (positive is right).
///
/// - `.x`: θ = 90 × the horizontal deflection, after a per-axis deadzone that is rescaled so full
///   deflection still reaches ±90: `v' = sign(v)·(|v| − dz)/(1 − dz)`, zero inside the deadzone.
/// - `.polar`: θ is the direction the stick points, north 0°, clockwise positive:
///   `θ = atan2(x, −y)` in degrees (evdev y is positive *down*). Used only when the stick's magnitude is
///   past the (radial) deadzone, else θ = 0. A stick pulled back (south, ±180°) clamps to ±90.
/// - `invert` flips the sign; `expo` e ∈ [0, 1] softens the centre: `v'' = (1 − e)·v' + e·v'³`
///   on the normalised value v' = θ/90.
public struct AxisMapper: Hashable, Sendable {
    /// How the stick becomes an angle.
    public enum Mode: String, CaseIterable, Hashable, Sendable {
        /// Horizontal deflection × 90.
        case x = "x"
        /// The stick's direction (north 0°, clockwise positive).
        case polar = "polar"
    }

    /// The mapping's tunables (config `[steering]`).
    public struct Settings: Hashable, Sendable {
        /// `.x` or `.polar` (default `.x`).
        public var mode: Mode
        /// Deadzone as a fraction of full deflection, 0…<1 (default 0.1).
        public var deadzone: Double
        /// Flip the sign of θ (default false).
        public var invert: Bool
        /// Expo curve amount, 0 (linear) … 1 (cubic) (default 0).
        public var expo: Double
        /// The `EV_ABS` code of the horizontal axis (default `ABS_X` = 0).
        public var xAxisCode: UInt16
        /// The `EV_ABS` code of the vertical axis (default `ABS_Y` = 1).
        public var yAxisCode: UInt16

        /// Creates settings; every parameter has a default.
        public init(
            mode: Mode = .x, deadzone: Double = 0.1, invert: Bool = false, expo: Double = 0,
            xAxisCode: UInt16 = 0, yAxisCode: UInt16 = 1
        ) {
            self.mode = mode
            self.deadzone = deadzone
            self.invert = invert
            self.expo = expo
            self.xAxisCode = xAxisCode
            self.yAxisCode = yAxisCode
        }
    }

    /// The tunables.
    public var settings: Settings

    /// Creates a mapper.
    public init(settings: Settings = .init()) { self.settings = settings }

    /// The deadzone clamped to 0…0.99 (a bad config can never divide by zero).
    private var deadzone: Double {
        guard settings.deadzone.isFinite else { return 0 }
        return MathSupport.clamp(settings.deadzone, 0, 0.99)
    }

    /// The expo clamped to 0…1.
    private var expo: Double {
        guard settings.expo.isFinite else { return 0 }
        return MathSupport.clamp(settings.expo, 0, 1)
    }

    /// θ in degrees (−90…90) for a stick at (x, y), each normalised to −1…1 (evdev: y positive is down).
    /// Non-finite inputs give 0.
    public func angleDegrees(x: Double, y: Double) -> Double {
        guard x.isFinite, y.isFinite else { return 0 }
        var normalised: Double
        switch settings.mode {
        case .x:
            normalised = rescaleDeadzone(MathSupport.clamp(x, -1, 1))
        case .polar:
            let magnitude = (x * x + y * y).squareRoot()
            guard magnitude > deadzone else { return 0 }
            normalised = MathSupport.clamp(MathSupport.atan2Degrees(x, -y), -90, 90) / 90
        }
        if settings.invert { normalised = -normalised }
        let e = expo
        normalised = (1 - e) * normalised + e * normalised * normalised * normalised
        let theta = MathSupport.clamp(normalised * 90, -90, 90)
        return theta == 0 ? 0 : theta  // no −0
    }

    /// `sign(v)·(|v| − dz)/(1 − dz)`, 0 inside the deadzone.
    func rescaleDeadzone(_ value: Double) -> Double {
        let dz = deadzone
        let magnitude = abs(value)
        guard magnitude > dz else { return 0 }
        let scaled = (magnitude - dz) / (1 - dz)
        return value < 0 ? -scaled : scaled
    }
}
