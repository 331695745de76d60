import DriveCore

/// Everything one device reported in one `SYN_REPORT` frame (or one IIO sample), normalised.
/// Devices produce these; mappers turn them into `Control`s.
public struct InputFrame: Hashable, Sendable {
    /// When the frame was read (CLOCK_MONOTONIC).
    public var time: Instant
    /// Axes whose value changed in this frame (after coalescing: the last value of each code).
    public var axes: [AxisValue]
    /// Key changes, in the order they happened.
    public var keys: [KeyChange]
    /// For accelerometers: the acceleration in m/s², after scale, offset and mount matrix.
    public var acceleration: Vector3?

    /// Creates a frame.
    public init(time: Instant, axes: [AxisValue] = [], keys: [KeyChange] = [], acceleration: Vector3? = nil) {
        self.time = time
        self.axes = axes
        self.keys = keys
        self.acceleration = acceleration
    }
}
