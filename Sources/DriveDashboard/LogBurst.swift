import DriveCore
import DriveSystem

/// Lets one log line per key through per `interval` (thread-safe): a flood of the same refusal is one line,
/// its count is in the metrics.
final class LogBurst: @unchecked Sendable {
    private let lock = ConditionLock()
    private let interval: Duration
    private var last: [String: Instant] = [:]

    init(interval: Duration = .seconds(10)) { self.interval = interval }

    /// True when `key` was not let through in the last `interval`.
    func allow(_ key: String, at now: Instant) -> Bool {
        lock.withLock {
            if let previous = last[key], now.duration(since: previous) < interval { return false }
            last[key] = now
            return true
        }
    }
}
