import DriveCore

/// A connection to the car, driven by one `EventLoop`: it moves frames out and car lines in,
/// and reports its state. It never decides what to send.
public protocol CarLink: AnyObject {
    /// A short name for logs, e.g. `tcp://127.0.0.1:9000`.
    var name: String { get }
    /// The current state.
    var state: LinkState { get }
    /// Called on every state change.
    var onStateChange: ((LinkState) -> Void)? { get set }
    /// Called for every line the car sends.
    var onLine: ((CarLine) -> Void)? { get set }
    /// Called with what the link found out that the driver should know (a BLE car's profile and write
    /// mode, notifications refused); the bridge makes each a run event. Links with nothing to say keep the
    /// default (none).
    var onNotice: ((String) -> Void)? { get set }
    /// Starts connecting (and reconnecting after losses).
    func start()
    /// Queues `frame` (newest motion frame wins, E/F kept in order); dropped while not up.
    func send(_ frame: Frame)
    /// Calls `done` once what is queued has reached the car (or the kernel let go of it), or with
    /// `.timedOut` after `within`; the link stays up.
    func flush(within: Duration, then done: @escaping (FlushResult) -> Void)
    /// Stops reconnecting, flushes what is queued for at most `flushWithin`, closes, then calls `done`
    /// with how the flush ended.
    func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void)
    /// What the kernel-queue rule did to the motion frames (nil for links without one).
    var holdStatistics: HoldStatistics? { get }
    /// What the link's lifecycle did (attempts, connections, stalls, the last back-off); nil for links
    /// that do not reconnect.
    var statistics: LinkSupervisor.Statistics? { get }
}

extension CarLink {
    /// No kernel-queue rule, no statistics.
    public var holdStatistics: HoldStatistics? { nil }

    /// No reconnecting lifecycle.
    public var statistics: LinkSupervisor.Statistics? { nil }

    /// Nothing to say.
    public var onNotice: ((String) -> Void)? {
        get { nil }
        set {}
    }
}
