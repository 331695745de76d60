import DriveSystem

/// The one-time join codes of the QR code (`[dashboard] join`), and the sessions made by a join
/// (thread-safe: the web side redeems, the event loop ends turns).
///
/// There is always one current code. Redeeming it spends it and makes the next one at once, so every
/// code logs in one phone, once; the next phone scans the next code. With `join = "per-turn"` the loop
/// calls `endTurn()` when a kiosk turn ends: every session made by a join so far is handed back to be
/// revoked, and the code shown is replaced too.
package final class JoinCodes: @unchecked Sendable {
    private let lock = ConditionLock()
    private var code: String
    private var codeGeneration = 0
    private var joinedSessions: [String] = []
    private let makeCode: @Sendable () -> String
    /// How many joined sessions are remembered: as many as the session store keeps (an older one is no
    /// longer valid there anyway), so a kiosk that never ends a turn does not collect them for ever.
    package let sessionLimit: Int

    /// Random bytes per code: 96 bits, 16 characters of base64url.
    package static let codeBytes = 12

    /// Starts with a fresh random code; `makeCode` replaces the generator (tests).
    package init(sessionLimit: Int = 64, makeCode: @escaping @Sendable () -> String = JoinCodes.randomCode) {
        self.sessionLimit = sessionLimit
        self.makeCode = makeCode
        code = makeCode()
    }

    /// The code a phone scans now, and its generation (moves whenever the code changes).
    package var current: (code: String, generation: Int) {
        lock.withLock { (code, codeGeneration) }
    }

    /// Spends `candidate` if it is the current code (compared in constant time) and makes the next code;
    /// false for a spent, older or wrong code.
    package func redeem(_ candidate: String) -> Bool {
        lock.withLock {
            guard Self.equalInConstantTime(code, candidate) else { return false }
            code = makeCode()
            codeGeneration += 1
            return true
        }
    }

    /// Remembers that session `id` was made by a join (revoked at the end of a turn with `"per-turn"`).
    package func joined(session id: String) {
        lock.withLock {
            joinedSessions.append(id)
            if joinedSessions.count > sessionLimit { joinedSessions.removeFirst(joinedSessions.count - sessionLimit) }
        }
    }

    /// The sessions made by a join and not yet revoked.
    package var sessions: [String] { lock.withLock { joinedSessions } }

    /// A kiosk turn ended: returns the sessions made by a join (to revoke) and forgets them, and replaces
    /// the current code, so the next driver scans a code nobody could have seen during the last turn.
    package func endTurn() -> [String] {
        lock.withLock {
            let ended = joinedSessions
            joinedSessions = []
            code = makeCode()
            codeGeneration += 1
            return ended
        }
    }

    /// A new random code: `codeBytes` random bytes in base64url (no padding), safe in a URL as it is.
    @Sendable package static func randomCode() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<codeBytes { bytes.append(generator.next()) }
        var out: [UInt8] = []
        var index = 0
        while index + 3 <= bytes.count {
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in stride(from: 18, through: 0, by: -6) { out.append(alphabet[Int(word >> UInt32(shift) & 0x3F)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when `a` and `b` are equal, in a time that depends on their lengths only.
    static func equalInConstantTime(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<x.count {
            difference |= x[index] ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
