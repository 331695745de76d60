/// The kiosk's turn limit (config `kiosk.session_limit_s`, docs/protocol.md §6): a driver's turn starts
/// when the engine goes on and ends `limit` later with the engine off; the next Engine press starts a
/// new turn. Turning the engine off earlier ends the turn too.
///
/// Pure: `DriveMachine` keeps one, tells it the engine's state after every step (`follow(engineOn:at:)`),
/// includes `deadline` in its own `nextDeadline`, and in the `tick` at which `isOver(at:)` turns the engine
/// off the normal way (the stop frame if the car is moving, then `E,0,0,0`).
public struct SessionLimit: Hashable, Sendable {
    /// How long one turn may last.
    public let limit: Duration
    /// When the current turn began (the engine went on); nil while the engine is off.
    public private(set) var turnStarted: Instant?

    /// A limit of `limit` per turn, no turn running.
    public init(limit: Duration) {
        self.limit = limit
    }

    /// Follows the engine: off → on starts a turn at `now`, on → off ends it; no change does nothing.
    public mutating func follow(engineOn: Bool, at now: Instant) {
        if !engineOn {
            turnStarted = nil
        } else if turnStarted == nil {
            turnStarted = now
        }
    }

    /// When the current turn ends; nil while no turn runs.
    public var deadline: Instant? { turnStarted?.advanced(by: limit) }

    /// True when a turn runs and its time is up at `now`.
    public func isOver(at now: Instant) -> Bool {
        guard let deadline else { return false }
        return now >= deadline
    }
}
