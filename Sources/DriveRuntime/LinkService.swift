/// The run's link to the car: connecting (and reconnecting) from start. Its end is the bridge's
/// shutdown (engine off flushed, then closed), which the session runs while the loop still turns;
/// when the service stops, only a start that failed after it has anything left to close.
final class LinkService: RunService {
    let name = "link"
    private let bridge: Bridge

    /// The link of `bridge`.
    init(bridge: Bridge) { self.bridge = bridge }

    func start() throws { bridge.start() }

    /// Closes the link when the run ends without the bridge's shutdown: a service after this one did not
    /// start, and the loop never turned, so nothing was sent (after a run, the shutdown closed it already).
    func stop() { bridge.shutdown(reason: "a service did not start", flushWithin: .zero) {} }
}
