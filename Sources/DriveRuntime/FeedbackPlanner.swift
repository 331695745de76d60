import DriveCore
import DriveInput

extension FeedbackEvent {
    /// The pulses: short 150 ms, long 700 ms, two short with 120 ms before each, very short 60 ms (weak motor),
    /// three short 100 ms with 100 ms before each (a low battery: unlike every driving cue).
    public var pattern: RumbleMotor.Pattern {
        switch self {
        case .engineOn: return RumbleMotor.Pattern(strong: 0.8, weak: 0.4, length: .milliseconds(150))
        case .stopped: return RumbleMotor.Pattern(strong: 1, weak: 1, length: .milliseconds(700))
        case .turnEnding:
            return RumbleMotor.Pattern(strong: 0.8, weak: 0.4, length: .milliseconds(150), delay: .milliseconds(120), count: 2)
        case .speedCapped: return RumbleMotor.Pattern(strong: 0, weak: 0.7, length: .milliseconds(60))
        case .batteryLow:
            return RumbleMotor.Pattern(strong: 0.5, weak: 0.8, length: .milliseconds(100), delay: .milliseconds(100), count: 3)
        }
    }
}

/// What the bridge reports, as the feedback cares about it.
public enum BridgeEvent: Hashable, Sendable {
    /// The drive state after a step.
    case state(DriveState)
    /// The link went up (`true`) or is down (`false`).
    case link(up: Bool)
    /// A control was applied.
    case applied(Control)
    /// The car's battery alarm changed (`LowBatteryAlarm`).
    case carBattery(LowBatteryAlarm.Change)
}

/// Decides which feedback event (a rumble cue) each bridge event deserves, when a kiosk turn's warning
/// is due, and whether a racing wheel's centring force is on (`centring`: while the engine is on, so a wheel
/// left alone returns to straight ahead, and a wheel with the engine off is free). Pure: times are handed in;
/// whoever runs it arms a timer at `nextDeadline` and calls `tick(at:)` there.
public struct FeedbackPlanner: Sendable {
    /// The speed cap (`drive.max_speed`): Speed+ that leaves the speed here is `speedCapped`.
    public let maxSpeed: Int
    /// The kiosk turn (`kiosk.session_limit_s`), if any.
    public let sessionLimit: Duration?
    /// How long before a turn's end the warning plays.
    public let warningLead: Duration

    private var engineOn = false
    private var linkUp = false
    private var speed = 0
    /// True while a racing wheel's centring force should be on: while the engine is on.
    public var centring: Bool { engineOn }
    /// When the current turn's warning plays; nil when none is due.
    public private(set) var nextDeadline: Instant?

    /// A planner for a `maxSpeed` cap and a kiosk `sessionLimit`, warning `warningLead` before a turn ends.
    public init(maxSpeed: Int, sessionLimit: Duration?, warningLead: Duration = .seconds(10)) {
        self.maxSpeed = maxSpeed
        self.sessionLimit = sessionLimit
        self.warningLead = warningLead
    }

    /// False for a control that never calls for a cue (`handle` returns nothing for it whatever the state):
    /// every control but lost input and Speed+.
    public static func answers(_ control: Control) -> Bool {
        switch control {
        case .inputLost, .speedUp: return true
        default: return false
        }
    }

    /// The cues `event` at `now` calls for (in order).
    public mutating func handle(_ event: BridgeEvent, at now: Instant) -> [FeedbackEvent] {
        switch event {
        case .state(let state):
            speed = state.speed
            guard state.engineOn != engineOn else { return [] }
            engineOn = state.engineOn
            guard engineOn else {
                nextDeadline = nil
                return []
            }
            // A turn starts with the engine (SessionLimit); warn `warningLead` before its end, if it is longer.
            if let limit = sessionLimit, limit > warningLead { nextDeadline = now.advanced(by: limit - warningLead) }
            return [.engineOn]
        case .link(let up):
            defer { linkUp = up }
            return linkUp && !up ? [.stopped] : []
        case .applied(.inputLost):
            return [.stopped]
        case .applied(.speedUp):
            return engineOn && speed >= maxSpeed ? [.speedCapped] : []
        case .applied:
            return []
        case .carBattery(let change):
            return change.isLow ? [.batteryLow] : []
        }
    }

    /// The cues due at `now` (the turn's warning once its time has come).
    public mutating func tick(at now: Instant) -> [FeedbackEvent] {
        guard let due = nextDeadline, now >= due else { return [] }
        nextDeadline = nil
        return engineOn ? [.turnEnding] : []
    }
}
