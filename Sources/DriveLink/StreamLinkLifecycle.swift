import DriveCore
import DriveSystem

/// Where a `StreamLink` stands, with what each state owns: the fd exists only in the states that
/// have one, each timer only in the state it belongs to. `StreamLink` changes it in one place
/// (`transition(to:)`); `release()` frees what the current state owns when a connection attempt or
/// a connection ends.
///
/// ```
/// idle ──start──▶ connecting ──connected──▶ up ──shutdown──▶ flushing ──drained / window over──▶ closed
///                  ▲     │                   │                  │
///                  │   failed / timed out    lost / stalled     lost ─────────────────────────▶ closed
///                  │     ▼                   ▼
///                  └─retry─ backingOff ◀─────┘        (shutdown in idle, connecting, backingOff ▶ closed)
/// ```
enum StreamLinkLifecycle {
    /// Created, not started.
    case idle
    /// A connect is under way: the connector prepares (`fd` nil: name resolution) or the socket
    /// connects (`fd` set, watched for writable). `timeout` gives the attempt up; `generation`
    /// tells a late answer from an attempt already given up.
    case connecting(generation: Int, fd: Int32?, timeout: EventLoop.TimerID?)
    /// Connected: frames go out on `fd`, car lines come in.
    case up(fd: Int32)
    /// Shutting down while connected: what is queued drains until `deadline`, looked at by `poll`;
    /// frames may still be sent.
    case flushing(fd: Int32, deadline: Instant, poll: EventLoop.TimerID?)
    /// Lost or failed for `reason`; `retry` starts the next connect after the back-off.
    case backingOff(reason: String, retry: EventLoop.TimerID)
    /// Shut down for good.
    case closed

    /// The fd of a connection that is up (also while it flushes for a shutdown).
    var connectionFD: Int32? {
        switch self {
        case .up(let fd), .flushing(let fd, _, _): return fd
        case .idle, .connecting, .backingOff, .closed: return nil
        }
    }

    /// What the link reports (`LinkState`).
    var linkState: LinkState {
        switch self {
        case .idle: return .down(reason: "not started")
        case .connecting: return .connecting
        case .up, .flushing: return .up
        case .backingOff(let reason, _): return .down(reason: reason)
        case .closed: return .closed
        }
    }
}
