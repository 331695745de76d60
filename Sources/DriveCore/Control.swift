/// Everything that can happen to the drive state machine: the driver's controls and
/// the safety events (protocol.md §4 and §6).
public enum Control: Hashable, Sendable {
    /// Toggle the engine (the one control that works while the engine is off).
    case engine
    /// Speed+ (S += 10 up to 240 or the cap).
    case speedUp
    /// Speed− (S −= 10 down to 0).
    case speedDown
    /// Toggle the gear (direction 1 ↔ 0).
    case gear
    /// Function key F1…F5 (`number` is 1…5).
    case function(Int)
    /// Set the steering angle θ in degrees (positive is right); clamped to ±90.
    case steer(Double)
    /// Set the speed directly (an analog throttle); rounded down to a multiple of 10 and capped.
    case setSpeed(Int)
    /// The dead-man button was pressed (`true`) or released (`false`).
    case deadman(held: Bool)
    /// The steering or button device went away or stopped delivering (§6).
    case inputLost
    /// The link to the car dropped (§6): S := 0, nothing can be sent.
    case linkLost
    /// The link to the car is (again) up.
    case linkUp
    /// The process is about to exit (SIGINT, SIGTERM, fatal error): engine off.
    case shutdown
}
