import DriveCore
import DriveLink
import DriveView

/// Something that happened in a run, as every subscriber of the run's `RunEvents` hears of it: what the
/// bridge did, what the input devices did, and what the feedback decided.
public enum RunEvent {
    /// One step of the drive machine: a control applied, a timer tick, a link change, a suspend or the
    /// shutdown, with the frames handed to the link and the state it left.
    case step(DriveStep)
    /// The link is now `state` (published before the safety frames that follow it).
    case link(LinkState)
    /// What the link's lifecycle did so far (attempts, stalls, the back-off before its next attempt),
    /// published just before each `link` change of a link that reconnects.
    case linkStatistics(LinkSupervisor.Statistics)
    /// The car sent `line`.
    case carLine(CarLine)
    /// The car's battery alarm changed (`[car] low_battery`), at `time`; a fall is followed by its notice.
    case carBattery(LowBatteryAlarm.Change, at: Instant)
    /// A notice for the driver (link up/down, an ignored Speed+, the idle timeout, a turn's end), at `time`.
    case notice(String, at: Instant)
    /// A line of the run's log, already formatted (while the live view shows the log among the notices).
    case logLine(String)
    /// An input device was opened or closed.
    case device(InputDeviceChange)
    /// The hands-free rider's reading after a frame or a tick (only when something is hands-free).
    case handsFree(HandsFreeReading)
    /// The feedback chose `cue` (what the pads' rumble plays) at `time`.
    case feedback(FeedbackEvent, at: Instant)
    /// The dashboard's join URL changed (`[dashboard] join`): the URL a phone opens and its QR code as
    /// ready terminal lines (two modules a line, light modules as glyphs), so the live view draws it
    /// without a QR encoder of its own; nil: no join code is shown.
    case join(JoinInvitation?)
    /// A pad's low-battery alarm changed (`[feedback] pad_low_battery`): raised or cleared.
    case padBattery(PadBatteryChange)
}

/// An input device opened or closed, for the views and the feedback.
public struct InputDeviceChange: Hashable, Sendable {
    /// Which device (its syspath, `keyboard`, `replay`, or the name it was attached with).
    public var key: String
    /// The device in words (`gamepad "Xbox 360 pad"`).
    public var description: String
    /// The evdev node of a gamepad, whose rumble motors the feedback may open; nil for other devices.
    public var gamepadNode: String?
    /// True when it was opened, false when it was closed.
    public var opened: Bool

    /// A change of the device `key`.
    public init(key: String, description: String, gamepadNode: String? = nil, opened: Bool) {
        self.key = key
        self.description = description
        self.gamepadNode = gamepadNode
        self.opened = opened
    }
}

/// A pad's battery alarm raised or cleared, for the log and the views.
public struct PadBatteryChange: Hashable, Sendable, CustomStringConvertible {
    /// Which pad (its device key, as in `InputDeviceChange`).
    public var key: String
    /// The pad in words (`gamepad "DualSense Wireless Controller"`).
    public var name: String
    /// The battery's level, 0…100 %.
    public var level: Int
    /// Whether the pad charges.
    public var charging: Bool
    /// True when the alarm was raised, false when it was cleared.
    public var isLow: Bool

    /// A change of the pad `key`.
    public init(key: String, name: String, level: Int, charging: Bool, isLow: Bool) {
        self.key = key
        self.name = name
        self.level = level
        self.charging = charging
        self.isLow = isLow
    }

    /// `pad battery low: gamepad "DualSense Wireless Controller" at 15 %`, `… charging …`, `… recovered …`.
    public var description: String {
        let what = isLow ? "low" : charging ? "charging" : "recovered"
        return "pad battery \(what): \(name) at \(level) %"
    }
}
