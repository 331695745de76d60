import DriveCore
import DriveInputModel

/// Turns a gravity vector from an accelerometer into a steering angle θ in −90…90 degrees.
///
/// Steps, in order: apply the mount matrix; roll = `atan2(a, b)` in degrees over the configured pair
/// of axes (`lateralAxis` = a, `verticalAxis` = b; default x and z); subtract the neutral angle (the
/// difference wrapped into ±180); multiply by the sensitivity; flip the sign if `invert`; clamp to ±90;
/// low-pass filter (`LowPassFilter`, time constant `filterTimeConstant`, 0 = none).
public struct TiltMapper: Hashable, Sendable {
    /// One axis of the (mounted) acceleration vector.
    public enum Axis: String, CaseIterable, Hashable, Sendable {
        case x, y, z

        /// This axis's component of `v`.
        public func component(of v: Vector3) -> Double {
            switch self {
            case .x: return v.x
            case .y: return v.y
            case .z: return v.z
            }
        }

        /// Parses a config axis pair such as `x,z` (lateral, vertical; spaces and case ignored);
        /// nil unless it names two different axes.
        public static func parsePair(_ text: String) -> (lateral: Axis, vertical: Axis)? {
            let parts = text.lowercased().split(separator: ",").map { String($0.filter { $0 != " " }) }
            guard parts.count == 2, let lateral = Axis(rawValue: parts[0]), let vertical = Axis(rawValue: parts[1]),
                  lateral != vertical else { return nil }
            return (lateral, vertical)
        }
    }

    /// The tunables (config `[tilt]`).
    public struct Settings: Hashable, Sendable {
        /// Applied to every sample first (default identity).
        public var mountMatrix: MountMatrix
        /// The axis along which gravity grows when the device rolls right (`a` in atan2(a, b); default x).
        public var lateralAxis: Axis
        /// The axis gravity points along at rest (`b` in atan2(a, b); default z).
        public var verticalAxis: Axis
        /// The raw roll that counts as straight ahead, in degrees (default 0; set by calibration).
        public var neutralDegrees: Double
        /// θ per degree of roll (default 1).
        public var sensitivity: Double
        /// Flip the sign of θ (default false).
        public var invert: Bool
        /// The low-pass time constant (default 0: no filter).
        public var filterTimeConstant: Duration

        /// Creates settings; every parameter has a default.
        public init(
            mountMatrix: MountMatrix = .identity, lateralAxis: Axis = .x, verticalAxis: Axis = .z,
            neutralDegrees: Double = 0, sensitivity: Double = 1, invert: Bool = false,
            filterTimeConstant: Duration = .zero
        ) {
            self.mountMatrix = mountMatrix
            self.lateralAxis = lateralAxis
            self.verticalAxis = verticalAxis
            self.neutralDegrees = neutralDegrees
            self.sensitivity = sensitivity
            self.invert = invert
            self.filterTimeConstant = filterTimeConstant
        }
    }

    /// The tunables.
    public private(set) var settings: Settings
    /// The filter state.
    public private(set) var filter: LowPassFilter

    /// Creates a mapper.
    public init(settings: Settings = .init()) {
        self.settings = settings
        self.filter = LowPassFilter(timeConstant: settings.filterTimeConstant)
    }

    /// The roll in degrees (−180…180) of `gravity` after the mount matrix, before neutral and
    /// sensitivity; nil for a non-finite or zero vector.
    public func rawRollDegrees(_ gravity: Vector3) -> Double? {
        let mounted = settings.mountMatrix.apply(gravity)
        let a = settings.lateralAxis.component(of: mounted)
        let b = settings.verticalAxis.component(of: mounted)
        guard a.isFinite, b.isFinite, a != 0 || b != 0 else { return nil }
        return MathSupport.atan2Degrees(a, b)
    }

    /// θ for `gravity` without filtering (−90…90); nil when the vector has no direction.
    public func unfilteredAngleDegrees(_ gravity: Vector3) -> Double? {
        guard let roll = rawRollDegrees(gravity) else { return nil }
        let sensitivity = settings.sensitivity.isFinite ? settings.sensitivity : 1
        let neutral = settings.neutralDegrees.isFinite ? settings.neutralDegrees : 0
        var theta = MathSupport.wrapDegrees(roll - neutral) * sensitivity
        if settings.invert { theta = -theta }
        return MathSupport.clamp(theta, -90, 90)
    }

    /// Feeds one sample taken at `time`; returns the filtered θ, or nil while no usable sample arrived.
    public mutating func update(gravity: Vector3, at time: Instant) -> Double? {
        guard let theta = unfilteredAngleDegrees(gravity) else { return filter.value }
        return filter.update(theta, at: time)
    }

    /// The current raw roll, to store as the neutral angle; nil for a vector with no direction.
    public func calibrateNeutral(from gravity: Vector3) -> Double? {
        rawRollDegrees(gravity)
    }

    /// Makes `gravity` the new straight-ahead and resets the filter; returns the neutral stored (nil:
    /// the vector had no direction, nothing changed).
    @discardableResult
    public mutating func calibrate(from gravity: Vector3) -> Double? {
        guard let neutral = calibrateNeutral(from: gravity) else { return nil }
        settings.neutralDegrees = neutral
        filter.reset()
        return neutral
    }

    /// Forgets the filter history (e.g. after the sensor came back).
    public mutating func reset() { filter.reset() }
}
