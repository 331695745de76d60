import DriveCore

/// Decides, per browser, when the newest snapshot goes out: at most one per `interval` (50 ms: 20 a
/// second), except at once when the engine, the link or the speed changed since the last one sent.
/// Pure (time is passed in), so the tests drive it with a manual clock.
package struct SnapshotCoalescer: Sendable {
    /// What makes a snapshot urgent: a change in any of these goes out at once.
    package struct Key: Hashable, Sendable {
        package var engineOn: Bool
        package var link: String
        package var speed: Int
        /// Creates a key.
        package init(engineOn: Bool, link: String, speed: Int) {
            self.engineOn = engineOn
            self.link = link
            self.speed = speed
        }
    }

    /// What to do with the newest snapshot now.
    package enum Action: Hashable, Sendable {
        /// Send it now (already recorded as sent).
        case send
        /// Too soon: offer it again at this instant (or when something urgent happens).
        case wait(until: Instant)
        /// The browser has it already.
        case nothing
    }

    /// The shortest time between two snapshots for one browser.
    package let interval: Duration
    private var lastSent: Instant?
    private var lastKey: Key?
    private var lastVersion: UInt64?

    /// Creates a coalescer (20 snapshots a second by default).
    package init(interval: Duration = .milliseconds(50)) {
        self.interval = interval
    }

    /// Offers snapshot `version` (versions only grow) with its `key` at `now`.
    package mutating func offer(version: UInt64, key: Key, at now: Instant) -> Action {
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
