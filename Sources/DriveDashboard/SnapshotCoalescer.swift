import DriveCore

/// Decides, per browser, when the newest snapshot goes out: at most one per `interval` (50 ms: 20 a
/// second), except at once when the engine, the link or the speed changed since the last one sent.
/// Pure (time is passed in), so the tests drive it with a manual clock.
public struct SnapshotCoalescer: Sendable {
    /// What makes a snapshot urgent: a change in any of these goes out at once.
    public struct Key: Hashable, Sendable {
        public var engineOn: Bool
        public var link: String
        public var speed: Int
        /// Creates a key.
        public init(engineOn: Bool, link: String, speed: Int) {
            self.engineOn = engineOn
            self.link = link
            self.speed = speed
        }
    }

    /// What to do with the newest snapshot now.
    public enum Action: Hashable, Sendable {
        /// Send it now (already recorded as sent).
        case send
        /// Too soon: offer it again at this instant (or when something urgent happens).
        case wait(until: Instant)
        /// The browser has it already.
        case nothing
    }

    /// The shortest time between two snapshots for one browser.
    public let interval: Duration
    private var lastSent: Instant?
    private var lastKey: Key?
    private var lastVersion: UInt64?

    /// Creates a coalescer (20 snapshots a second by default).
    public init(interval: Duration = .milliseconds(50)) {
        self.interval = interval
    }

    /// Offers snapshot `version` (versions only grow) with its `key` at `now`.
    public mutating func offer(version: UInt64, key: Key, at now: Instant) -> Action {
        if version == lastVersion { return .nothing }
        if let lastSent, key == lastKey {
            let due = lastSent.advanced(by: interval)
            if now < due { return .wait(until: due) }
        }
        lastSent = now
        lastKey = key
        lastVersion = version
        return .send
    }
}
