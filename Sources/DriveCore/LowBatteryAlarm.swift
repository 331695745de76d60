/// Watches the battery key of the car's status lines against a `LowBatteryRule`: a value below the
/// threshold raises the alarm once; it is raised again only after a value at least
/// `LowBatteryRule.rearmMargin` above the threshold has cleared it. Pure: the caller hands in each
/// status line; carbridge only warns, it never stops the car for it (the car's own firmware decides).
public struct LowBatteryAlarm: Hashable, Sendable {
    /// A change of the alarm.
    public enum Change: Hashable, Sendable, CustomStringConvertible {
        /// The value fell below the threshold: the alarm is raised.
        case low(key: String, value: String, threshold: Double)
        /// The value came back above the threshold and its margin: the alarm is cleared.
        case recovered(key: String, value: String)

        /// True for `low`.
        public var isLow: Bool {
            if case .low = self { return true }
            return false
        }

        /// `car battery low: BAT=6.71 (below 6.8)`, `car battery recovered: BAT=7.05`.
        public var description: String {
            switch self {
            case .low(let key, let value, let threshold):
                return "car battery low: \(key)=\(value) (below \(LowBatteryRule.text(threshold)))"
            case .recovered(let key, let value):
                return "car battery recovered: \(key)=\(value)"
            }
        }
    }

    /// The rule.
    public let rule: LowBatteryRule
    /// True while the alarm is raised (a low value came, and no value since cleared it).
    public private(set) var isLow = false

    /// An alarm for `rule`, not raised.
    public init(rule: LowBatteryRule) {
        self.rule = rule
    }

    /// Takes in a status line; returns the change it makes, if any (a line without the key, or with a
    /// value that is not a number, changes nothing).
    public mutating func observe(_ line: CarStatusLine) -> Change? {
        guard let pair = line.pairs.last(where: { $0.key == rule.key }), let value = pair.number else { return nil }
        if !isLow, value < rule.threshold {
            isLow = true
            return .low(key: pair.key, value: pair.value, threshold: rule.threshold)
        }
        if isLow, value >= rule.threshold + LowBatteryRule.rearmMargin - 1e-9 {  // 6.8 + 0.2 is not exactly 7 in binary
            isLow = false
            return .recovered(key: pair.key, value: pair.value)
        }
        return nil
    }
}
