/// `[car] low_battery`: which status key is the battery and below which value it is low, written
/// `KEY<NUMBER` (`"BAT<6.8"`: the `BAT` key below 6.8; docs/protocol.md §7).
public struct LowBatteryRule: Hashable, Sendable, CustomStringConvertible {
    /// Why a text is not a rule.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, in words.
        public var reason: String
        public var description: String { reason }
    }

    /// How far above the threshold a value must come back before a low value warns again: a value that
    /// hovers at the threshold (an ADC's last digit, a voltage sagging under load) warns once.
    public static let rearmMargin = 0.2

    /// The status key (`BAT`).
    public var key: String
    /// Below this the battery is low.
    public var threshold: Double

    /// A rule for `key` below `threshold`.
    public init(key: String, threshold: Double) {
        self.key = key
        self.threshold = threshold
    }

    /// Parses `KEY<NUMBER` (spaces around the parts allowed).
    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: "<", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw ParseError(reason: "\"\(text)\" is not KEY<NUMBER (e.g. \"BAT<6.8\": the BAT status key below 6.8)")
        }
        let key = parts[0].trimmingSpaces
        let number = parts[1].trimmingSpaces
        guard let pair = CarStatusLine("\(key)=1"), pair.pairs.count == 1, pair.pairs[0].key == key else {
            throw ParseError(
                reason: "\"\(key)\" is not a status key: a letter, then up to 15 letters, digits or _ (e.g. BAT)")
        }
        guard let threshold = CarStatusLine.number(number) else {
            throw ParseError(reason: "\"\(number)\" after < is not a number (e.g. \"BAT<6.8\")")
        }
        self.init(key: key, threshold: threshold)
    }

    /// `BAT<6.8`.
    public var description: String { "\(key)<\(Self.text(threshold))" }

    /// `6.8`, `20` (no `.0` for a whole number).
    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
