import DriveCore
import DriveSystem

/// The dashboard's connections per client address (thread-safe): one past `perAddress` open at once, or past
/// `rate` new ones, is refused, so one phone (or one script) can neither take the slots everyone else needs
/// nor keep the web side busy with handshakes by reconnecting as fast as it can.
package final class ConnectionTable: @unchecked Sendable {
    /// Whether a new connection may stay.
    package enum Admission: Hashable, Sendable {
        /// Keep it (and count it until `close`).
        case accept
        /// Close it: the address holds `perAddress` already.
        case refuseOpen
        /// Close it: the address opens connections faster than `rate` allows.
        case refuseRate
    }

    /// The most connections one address may hold open.
    package let perAddress: Int
    private let lock = ConditionLock()
    private var rate: AttemptLimiter
    private var open: [String: Int] = [:]

    /// Creates an empty table: `perAddress` connections open at once, new ones at `rate` (a burst, then one per
    /// interval) from each address.
    package init(perAddress: Int, rate: AttemptLimiter = AttemptLimiter(burst: 32, interval: .milliseconds(125))) {
        self.perAddress = max(1, perAddress)
        self.rate = rate
    }

    /// A connection from `address` opened at `now`: counted and accepted, or refused (not counted).
    package func open(from address: String, at now: Instant) -> Admission {
        lock.withLock {
            if case .refuse = rate.attempt(from: address, at: now) { return .refuseRate }
            let count = open[address, default: 0]
            guard count < perAddress else { return .refuseOpen }
            open[address] = count + 1
            return .accept
        }
    }

    /// An accepted connection from `address` closed.
    package func close(from address: String) {
        lock.withLock {
            guard let count = open[address] else { return }
            if count <= 1 { open.removeValue(forKey: address) } else { open[address] = count - 1 }
        }
    }

    /// The connections `address` holds open now.
    package func count(from address: String) -> Int { lock.withLock { open[address, default: 0] } }
}
