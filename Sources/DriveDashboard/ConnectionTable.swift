import DriveSystem

/// The dashboard's open connections per client address (thread-safe): a connection past `perAddress` from one
/// address is refused, so one phone (or one script) cannot take the slots everyone else needs.
package final class ConnectionTable: @unchecked Sendable {
    /// Whether a new connection may stay.
    package enum Admission: Hashable, Sendable {
        /// Keep it (and count it until `close`).
        case accept
        /// Close it. `firstOfBurst`: the first refusal since the address was last accepted (the one to log).
        case refuse(firstOfBurst: Bool)
    }

    /// The most connections one address may hold open.
    package let perAddress: Int
    private let lock = ConditionLock()
    private var open: [String: Int] = [:]
    private var refusing: Set<String> = []

    /// Creates an empty table.
    package init(perAddress: Int) { self.perAddress = max(1, perAddress) }

    /// A connection from `address` opened: counted and accepted, or refused (not counted).
    package func open(from address: String) -> Admission {
        lock.withLock {
            let count = open[address, default: 0]
            guard count < perAddress else {
                return .refuse(firstOfBurst: refusing.insert(address).inserted)
            }
            open[address] = count + 1
            refusing.remove(address)
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
