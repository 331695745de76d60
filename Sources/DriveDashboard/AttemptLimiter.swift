import DriveCore
import DriveSystem

/// Slows a guessing loop against the token or the join codes: per client address, `burst` attempts at once,
/// then one every `interval` (a token bucket per address). Pure; `AttemptGate` shares one between threads.
///
/// Every attempt counts, a right one too: a client cannot tell from the answer's timing whether a throttled
/// guess was right, because a throttled guess is never checked.
package struct AttemptLimiter: Sendable {
    /// What to do with one attempt.
    package enum Decision: Hashable, Sendable {
        /// Check it.
        case allow
        /// Refuse it unchecked; the address may try again after `retryAfter`. `firstOfBurst` is true for the
        /// first refusal since the address was last allowed: the one worth a log line.
        case refuse(retryAfter: Duration, firstOfBurst: Bool)
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var last: Instant
        var refusing: Bool
    }

    /// Attempts allowed at once from one address.
    package let burst: Int
    /// The time that gives one attempt back.
    package let interval: Duration
    /// How many addresses are remembered (the ones with full buckets, then the longest quiet, are forgotten first).
    package let addressLimit: Int
    private var buckets: [String: Bucket] = [:]

    /// Creates a limiter: `burst` attempts at once per address, then one every `interval`.
    package init(burst: Int = 5, interval: Duration = .seconds(2), addressLimit: Int = 1024) {
        self.burst = max(1, burst)
        self.interval = interval
        self.addressLimit = max(1, addressLimit)
    }

    /// The number of addresses remembered.
    package var addressCount: Int { buckets.count }

    /// Counts an attempt from `address` at `now` and says whether to check it.
    package mutating func attempt(from address: String, at now: Instant) -> Decision {
        let perToken = max(Double(interval.nanoseconds), 1)
        var bucket = buckets[address] ?? Bucket(tokens: Double(burst), last: now, refusing: false)
        let elapsed = Double(max(0, now.duration(since: bucket.last).nanoseconds))
        bucket.tokens = min(Double(burst), bucket.tokens + elapsed / perToken)
        bucket.last = now
        let decision: Decision
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            bucket.refusing = false
            decision = .allow
        } else {
            let wait = Int64(((1 - bucket.tokens) * perToken).rounded(.up))
            decision = .refuse(retryAfter: .nanoseconds(wait), firstOfBurst: !bucket.refusing)
            bucket.refusing = true
        }
        if buckets[address] == nil && buckets.count >= addressLimit { forgetOne(at: now, perToken: perToken) }
        buckets[address] = bucket
        return decision
    }

    /// Makes room for a new address: one whose bucket has refilled (it lost nothing by being forgotten), else
    /// the one quiet the longest.
    private mutating func forgetOne(at now: Instant, perToken: Double) {
        let full = buckets.first { _, bucket in
            bucket.tokens + Double(max(0, now.duration(since: bucket.last).nanoseconds)) / perToken >= Double(burst)
        }
        if let key = full?.key ?? buckets.min(by: { $0.value.last < $1.value.last })?.key {
            buckets.removeValue(forKey: key)
        }
    }
}

/// An `AttemptLimiter` shared by the web side's threads.
package final class AttemptGate: @unchecked Sendable {
    private let lock = ConditionLock()
    private var limiter: AttemptLimiter

    /// Wraps `limiter`.
    package init(_ limiter: AttemptLimiter) { self.limiter = limiter }

    /// `AttemptLimiter.attempt(from:at:)`, under the lock.
    package func attempt(from address: String, at now: Instant) -> AttemptLimiter.Decision {
        lock.withLock { limiter.attempt(from: address, at: now) }
    }
}
