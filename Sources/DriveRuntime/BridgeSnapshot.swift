import DriveCore

/// What the bridge looks like right now, for the run view and logs.
public struct BridgeSnapshot: Sendable {
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
    /// Recent log lines and notices, oldest first.
    public var notices: [String]
    /// The input sources in use, in words.
    public var inputs: [String]
}
