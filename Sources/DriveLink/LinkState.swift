/// Where a link to the car stands.
public enum LinkState: Hashable, Sendable, CustomStringConvertible {
    /// Connecting (or reconnecting) to the car.
    case connecting
    /// Connected: frames go out.
    case up
    /// Lost or failed; a reconnect is scheduled unless the link is shutting down.
    case down(reason: String)
    /// Shut down for good.
    case closed

    /// True when frames can be sent.
    public var isUp: Bool { self == .up }

    public var description: String {
        switch self {
        case .connecting: return "connecting"
        case .up: return "up"
        case .down(let reason): return "down: \(reason)"
        case .closed: return "closed"
        }
    }
}
