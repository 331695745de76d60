/// Something the driver is told without looking at a screen: the pad's rumble plays it (`[feedback]`),
/// and the dashboard lists it. A kiosk visitor has no screen; a driver watches the car, not the laptop.
public enum FeedbackEvent: Int, Hashable, Sendable, CaseIterable {
    /// The engine went on: one short pulse.
    case engineOn
    /// The car was stopped for safety (link lost, input lost): one long pulse.
    case stopped
    /// The kiosk turn ends in 10 s: two short pulses.
    case turnEnding
    /// Speed+ at `max_speed`: one very short pulse.
    case speedCapped
    /// The car's battery fell below `[car] low_battery`: three short pulses. Keep it last: FeedbackService
    /// uploads it only when `[car] low_battery` is set, and the other cues' raw values are their indices.
    case batteryLow

    /// A stable identifier (the dashboard's JSON).
    public var name: String {
        switch self {
        case .engineOn: return "engineOn"
        case .stopped: return "stopped"
        case .turnEnding: return "turnEnding"
        case .speedCapped: return "speedCapped"
        case .batteryLow: return "batteryLow"
        }
    }

    /// In words, for the dashboard.
    public var text: String {
        switch self {
        case .engineOn: return "engine on"
        case .stopped: return "stopped: link or input lost"
        case .turnEnding: return "turn ends in 10 s"
        case .speedCapped: return "speed capped at max_speed"
        case .batteryLow: return "car battery low"
        }
    }
}
