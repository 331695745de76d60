/// One pad's low battery (`[feedback] pad_low_battery`): a reading at or below the threshold while the pad
/// does not charge raises it; charging, or a level more than `rearmMargin` above the threshold, clears it; it
/// is raised again only after the level was above that margin (a new pad, a reconnected one, starts afresh).
/// So a battery that hovers at the threshold warns once, and one put on its cable and taken off again at the
/// same level does not warn twice. Pure.
public struct PadBatteryAlarm: Hashable, Sendable {
    /// A change of the alarm.
    public enum Change: Hashable, Sendable {
        /// Raised: the battery is low.
        case low
        /// Cleared: the pad charges or the battery came back.
        case cleared
    }

    /// How many percent above the threshold a battery must come back before it warns again.
    public static let rearmMargin = 5

    /// At or below this many percent the battery is low; 0 never warns.
    public let threshold: Int
    /// True while the alarm is raised.
    public private(set) var isLow = false
    /// False after a warning until the level was above the threshold and its margin.
    private var armed = true

    /// An alarm at `threshold` %, not raised.
    public init(threshold: Int) {
        self.threshold = threshold
    }

    /// Takes in a reading; returns the change it makes, if any.
    public mutating func observe(level: Int, charging: Bool) -> Change? {
        guard threshold > 0 else { return nil }
        if level > threshold + Self.rearmMargin { armed = true }
        if isLow, charging || level > threshold + Self.rearmMargin {
            isLow = false
            return .cleared
        }
        if !isLow, armed, !charging, level <= threshold {
            isLow = true
            armed = false
            return .low
        }
        return nil
    }
}
