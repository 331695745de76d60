import DriveCore

/// How one kind of link reaches the car (a byte stream: TCP, a serial tty, RFCOMM; or a BLE car through
/// bluetoothd), under the `LinkSupervisor` that decides when to connect, reconnect, flush and close.
///
/// A transport opens one attempt at a time, writes frames by its own rules (each mode with a stall rule:
/// a car that takes nothing for the stall timeout is a loss), and reports through `onEvent`. It reports a
/// loss only after it has closed what it had, in its own way (an abortive close, a Bluetooth disconnect),
/// so that nothing it queued reaches the car later.
public protocol LinkTransport: AnyObject {
    /// A short name for logs, e.g. `tcp://127.0.0.1:9000`.
    var name: String { get }
    /// Where the transport reports (set by the `SupervisedLink` that owns it).
    var onEvent: ((TransportEvent) -> Void)? { get set }
    /// Starts connect attempt `attempt`; `.opened(attempt:)` or `.failed` follows, possibly at once.
    func open(attempt: Int)
    /// The attempt under way took longer than `timeout`: closes what it opened and says why.
    func abandonAttempt(after timeout: Duration) -> String
    /// Queues `frame` and writes what may go now; drops it unless the connection is up (the link's only
    /// guard on the send path).
    func send(_ frame: Frame)
    /// True when nothing queued is left undelivered (may look at the kernel's queue).
    func isDrained() -> Bool
    /// How closely to report the queue draining (`.progressed` events).
    func watchDrain(_ watch: LinkSupervisor.DrainWatch)
    /// Closes for a shutdown that ends with `result`: cleanly when `.delivered`, abortively otherwise (so
    /// nothing undelivered arrives later); calls `done` once closed. Also called with no connection.
    func close(result: FlushResult, then done: @escaping () -> Void)
    /// What the kernel-queue rule did to the motion frames (nil for transports without one).
    var holdStatistics: HoldStatistics? { get }
}

extension LinkTransport {
    /// No kernel-queue rule.
    public var holdStatistics: HoldStatistics? { nil }
}

/// What a transport tells its `SupervisedLink`.
public enum TransportEvent {
    /// Attempt `attempt` connected: frames may go.
    case opened(attempt: Int)
    /// The attempt failed or the connection was lost for `reason` (already closed); `stalled` when the car
    /// took nothing for the stall timeout.
    case failed(String, stalled: Bool)
    /// The transport looked at its queue while a drain is watched; `drained` when nothing is left.
    case progressed(drained: Bool)
    /// The car sent `line`.
    case line(CarLine)
    /// Something the driver should know (a BLE car's profile and write mode, notifications refused).
    case notice(String)
}
