/// The tunables of the drive state machine (docs/protocol.md; config `[drive]`).
public struct DriveSettings: Hashable, Sendable {
    /// What to do when the controlling input is lost (docs/protocol.md §6).
    public enum InputLossPolicy: String, CaseIterable, Hashable, Sendable {
        /// S := 0 and send the stop frame (motion frame with S=0).
        case stop = "stop"
        /// Turn the engine off: `E,0,0,0`.
        case engineOff = "engine-off"
    }

    /// The streaming period while S > 0 (default 50 ms).
    public var period: Duration
    /// Hysteresis around the angle-range boundaries in degrees (default 2; 0 = bare table).
    public var hysteresisDegrees: Double
    /// The speed cap: Speed+ stops here (multiple of 10, 10…240; default 240).
    public var maxSpeed: Int
    /// Engine off after this long without driver activity; nil = never (default).
    public var idleTimeout: Duration?
    /// What input loss does (default `.stop`).
    public var onInputLost: InputLossPolicy
    /// When true, S is forced to 0 unless the dead-man button is held.
    public var deadmanRequired: Bool
    /// A steer that moves θ at least this far from the last active θ counts as activity for the idle timeout.
    public var activityThresholdDegrees: Double

    /// Creates settings; every parameter has the spec's default.
    public init(
        period: Duration = .milliseconds(50),
        hysteresisDegrees: Double = 2,
        maxSpeed: Int = 240,
        idleTimeout: Duration? = nil,
        onInputLost: InputLossPolicy = .stop,
        deadmanRequired: Bool = false,
        activityThresholdDegrees: Double = 5
    ) {
        self.period = period
        self.hysteresisDegrees = hysteresisDegrees
        self.maxSpeed = maxSpeed
        self.idleTimeout = idleTimeout
        self.onInputLost = onInputLost
        self.deadmanRequired = deadmanRequired
        self.activityThresholdDegrees = activityThresholdDegrees
    }

    /// The highest speed Speed+ may reach: min(240, maxSpeed).
    public var speedCeiling: Int { min(240, maxSpeed) }
}
