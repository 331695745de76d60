import DriveCore
import DriveSystem

/// Lets one log line per key through per `interval` (thread-safe): a flood of the same refusal is one line,
/// its count is in the metrics. Remembers at most `limit` keys (the ones older than `interval` go first).
final class LogBurst: @unchecked Sendable {
    private let lock = ConditionLock()
    private let interval: Duration
    private let limit: Int
    private var last: [String: Instant] = [:]

    init(interval: Duration = .seconds(10), limit: Int = 1024) {
        self.interval = interval
        self.limit = limit
    }

    /// True when `key` was not let through in the last `interval`.
    func allow(_ key: String, at now: Instant) -> Bool {
        lock.withLock {
            if let previous = last[key], now.duration(since: previous) < interval { return false }
            if last.count >= limit {
                last = last.filter { now.duration(since: $0.value) < interval }
                // Still full (that many keys in one interval): a flood of addresses, told once in a while at most.
                if last.count >= limit { return false }
            }
            last[key] = now
            return true
        }
    }
}
