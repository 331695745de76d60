import DriveCore

/// What a run looks like right now, as a value: what every view of a run reads (DriveRuntime's
/// `RunViewModel` keeps it up to date; the terminal's `RunView`, the web dashboard and the systemd
/// status line read it). In its own module, so no view depends on another for it, and DriveCore stays
/// the drive logic alone.
public struct RunSnapshot: Sendable {
    /// The drive state.
    public var state: DriveState
    /// The link's URL as configured.
    public var linkName: String
    /// The link's state in words ("up", "connecting", "down: …").
    public var linkStatus: String
    /// The last frame handed to the link, and when.
    public var lastFrame: (frame: Frame, time: Instant)?
    /// Frames handed to the link so far.
    public var framesSent: Int
    /// The car's most recent lines, oldest first.
    public var carLines: [(time: Instant, text: String)]
    /// Recent notices and (while the view is up) log lines, oldest first.
    public var notices: [String]
    /// The input sources in use, in words.
    public var inputs: [String]
    /// The hands-free rider (tilt throttle, balance board); nil when nothing is hands-free.
    public var handsFree: HandsFreeReading?
    /// The car's status lines as a table (docs/protocol.md §7).
    public var carStatus = CarStatusTable()
    /// While the car's battery is low (`[car] low_battery`): the warning (`car battery low: BAT=6.71 (below 6.8)`).
    public var batteryWarning: String?
    /// The pads whose battery is low (`[feedback] pad_low_battery`), one warning each
    /// (`pad battery low: gamepad "DualSense Wireless Controller" at 15 %`).
    public var padBatteryWarnings: [String] = []
    /// The most recent feedback events (what the pad's rumble plays), oldest first.
    public var feedback: [(time: Instant, event: FeedbackEvent)]
    /// The dashboard's join URL and its QR code for a terminal, while one is shown.
    public var join: JoinInvitation?

    /// Creates a snapshot (by default: engine off, nothing sent, nothing heard).
    public init(
        state: DriveState = DriveState(), linkName: String, linkStatus: String,
        lastFrame: (frame: Frame, time: Instant)? = nil, framesSent: Int = 0,
        carLines: [(time: Instant, text: String)] = [], notices: [String] = [], inputs: [String] = [],
        handsFree: HandsFreeReading? = nil, feedback: [(time: Instant, event: FeedbackEvent)] = []
    ) {
        self.handsFree = handsFree
        self.feedback = feedback
        self.state = state
        self.linkName = linkName
        self.linkStatus = linkStatus
        self.lastFrame = lastFrame
        self.framesSent = framesSent
        self.carLines = carLines
        self.notices = notices
        self.inputs = inputs
    }
}
