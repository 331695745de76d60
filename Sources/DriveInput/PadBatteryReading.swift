/// A pad's battery as its driver reports it in sysfs (`power_supply/NAME/capacity` and `status`).
public struct PadBatteryReading: Hashable, Sendable {
    /// 0…100 %.
    public var level: Int
    /// True while the pad charges or is full on its cable (`status` `Charging` or `Full`).
    public var charging: Bool

    /// Creates a reading.
    public init(level: Int, charging: Bool) {
        self.level = level
        self.charging = charging
    }

    /// Reads the battery in `directory`; nil when `capacity` is missing or not a number. A missing or unknown
    /// `status` (`Unknown`: hid-playstation's until the pad's first report) counts as not charging. The
    /// drivers checked (hid-playstation, hid-sony) answer from what the pad last reported, without asking it.
    public static func read(_ directory: String) -> PadBatteryReading? {
        guard let capacity = SysfsFile.readText(directory + "/capacity").flatMap({ Int($0) }) else { return nil }
        let status = SysfsFile.readText(directory + "/status") ?? "Unknown"
        return PadBatteryReading(level: min(max(capacity, 0), 100), charging: status == "Charging" || status == "Full")
    }
}
