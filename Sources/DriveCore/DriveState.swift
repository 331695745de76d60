/// The drive state of docs/protocol.md §1, plus whether the dead-man button is held.
public struct DriveState: Hashable, Sendable {
    /// Engine on or off (initially off).
    public var engineOn: Bool
    /// `S`: 0…240 in steps of 10 (initially 0).
    public var speed: Int
    /// `D`: 1 forward, 0 reverse (initially 1).
    public var direction: Int
    /// θ in degrees, already clamped to ±90 (positive is right; initially 0).
    public var angleDegrees: Double
    /// `A`: −2…2, derived from θ with hysteresis (initially 0).
    public var range: Int
    /// Whether the dead-man button is held (initially not).
    public var deadmanHeld: Bool

    /// Creates a state; the defaults are the spec's initial state.
    public init(
        engineOn: Bool = false, speed: Int = 0, direction: Int = 1,
        angleDegrees: Double = 0, range: Int = 0, deadmanHeld: Bool = false
    ) {
        self.engineOn = engineOn
        self.speed = speed
        self.direction = direction
        self.angleDegrees = angleDegrees
        self.range = range
        self.deadmanHeld = deadmanHeld
    }

    /// The spec's initial state: engine off, S 0, D 1, θ 0, A 0, dead-man not held.
    public static let initial = DriveState()

    /// The motion frame (`M L R B X Y`) for the current A, S and D.
    public var motionFrame: Frame { .motion(range: range, speed: speed, direction: direction) }
}
