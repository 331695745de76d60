/// Everything that can happen to the drive state machine: the driver's controls and
/// the safety events (docs/protocol.md §4 and §6).
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
    /// The steering or button device went away or stopped delivering (§6): the car stops, and
    /// Speed+ and the throttle are ignored until `.inputRestored`.
    case inputLost
    /// The lost steering or button device is back (re-opened): motion may be asked for again.
    case inputRestored
    /// The link to the car dropped (§6): S := 0, nothing can be sent.
    case linkLost
    /// The link to the car is (again) up: the machine answers with the safety handshake (§6).
    case linkUp
    /// The process is about to be suspended (SIGTSTP): S := 0 and the stop frame; the engine stays on.
    case suspend
    /// The process is about to exit (SIGINT, SIGTERM, SIGQUIT, fatal error): engine off.
    case shutdown
}
