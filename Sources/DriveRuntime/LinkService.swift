/// The run's link to the car: connecting (and reconnecting) from start. Its end is the bridge's
/// shutdown (engine off flushed, then closed), which the session runs while the loop still turns;
/// nothing is left to do when the service stops.
final class LinkService: RunService {
    let name = "link"
    private let bridge: Bridge

    /// The link of `bridge`.
    init(bridge: Bridge) { self.bridge = bridge }

    func start() throws { bridge.start() }

    func stop() {}
}
