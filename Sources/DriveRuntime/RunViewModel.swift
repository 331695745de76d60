import DriveCore
import DriveLink

/// What the live view of `carbridge run` (and later a browser dashboard) reads: the drive state,
/// the link's name and status, the last frame and its time, the frames sent, the car's recent lines
/// with their times, notices and the inputs in use.
///
/// Fed directly by the bridge as its `BridgeObserver` (no round trip through the log); read as one
/// value, `snapshot`. Everything happens on the bridge's event loop.
public final class RunViewModel: BridgeObserver {
    /// Everything shown, as a value.
    public private(set) var snapshot: RunSnapshot
    /// How many car lines and notices are kept (the oldest go first).
    public var historyLimit = 50 {
        didSet { trim() }
    }
    /// Called after anything shown has changed.
    public var onChange: (() -> Void)?
    /// The bridge's events the feedback can answer (the pad's rumble follows them): every link change, a state
    /// whose engine or speed differs from the last one told, and the controls `FeedbackPlanner.answers(_:)`.
    /// A report that only steers tells nothing (it was two calls into the planner per input report).
    public var onBridgeEvent: ((BridgeEvent) -> Void)? {
        didSet { toldEngineAndSpeed = nil }  // a new listener has been told nothing yet
    }
    /// The engine and speed of the last state told to `onBridgeEvent` (nil: none yet).
    private var toldEngineAndSpeed: (engineOn: Bool, speed: Int)?
    /// Also called after anything shown has changed (the web dashboard; `onChange` is the live view's).
    public var changeHandlers: [() -> Void] = []
    /// How a bridge notice is shown among the notices (the run view shows it the way its diverted
    /// log shows every other line; by default the bare text).
    public var noticeText: (String) -> String = { $0 }

    /// An empty view of the link `linkName` (engine off, nothing sent, link not started).
    public init(linkName: String, linkStatus: String = LinkState.down(reason: "not started").description) {
        snapshot = RunSnapshot(linkName: linkName, linkStatus: linkStatus)
    }

    /// A view of `bridge`, which reports to it from now on (and keeps it; the model does not keep the bridge).
    public convenience init(observing bridge: Bridge) {
        self.init(linkName: bridge.link.name, linkStatus: bridge.link.state.description)
        snapshot.state = bridge.state
        snapshot.framesSent = bridge.framesSent
        bridge.observer = self
    }

    /// The input sources in use, in words.
    public var inputs: [String] {
        get { snapshot.inputs }
        set {
            snapshot.inputs = newValue
            changed()
        }
    }

    /// The hands-free rider; a reading equal to the last one (they are rounded) changes nothing.
    public var handsFree: HandsFreeReading? {
        get { snapshot.handsFree }
        set {
            guard newValue != snapshot.handsFree else { return }
            snapshot.handsFree = newValue
            changed()
        }
    }

    /// How many feedback events are kept (the oldest go first).
    public static let feedbackLimit = 10

    /// Records a feedback event (what the pad's rumble plays) for the views.
    public func record(_ event: FeedbackEvent, at time: Instant) {
        snapshot.feedback.append((time, event))
        if snapshot.feedback.count > Self.feedbackLimit {
            snapshot.feedback.removeFirst(snapshot.feedback.count - Self.feedbackLimit)
        }
        changed()
    }

    /// Calls `handler` after anything shown has changed, from now on (besides `onChange`).
    public func addChangeHandler(_ handler: @escaping () -> Void) {
        changeHandlers.append(handler)
    }

    /// Adds a line to the notices as it is (a log line while the run view diverts the log).
    public func appendNotice(_ text: String) {
        snapshot.notices.append(text)
        trim()
        changed()
    }

    // MARK: BridgeObserver

    public func bridge(_ bridge: Bridge, stateIs state: DriveState) {
        if let onBridgeEvent, toldEngineAndSpeed?.engineOn != state.engineOn || toldEngineAndSpeed?.speed != state.speed {
            toldEngineAndSpeed = (state.engineOn, state.speed)
            onBridgeEvent(.state(state))
        }
        guard state != snapshot.state else { return }
        snapshot.state = state
        changed()
    }

    public func bridge(_ bridge: Bridge, delivered frame: Frame, at time: Instant) {
        snapshot.lastFrame = (frame, time)
        snapshot.framesSent += 1
        changed()
    }

    public func bridge(_ bridge: Bridge, linkChanged state: LinkState) {
        onBridgeEvent?(.link(up: state.isUp))
        snapshot.linkStatus = state.description
        changed()
    }

    public func bridge(_ bridge: Bridge, applied control: Control, at time: Instant) {
        if let onBridgeEvent, FeedbackPlanner.answers(control) { onBridgeEvent(.applied(control)) }
    }

    public func bridge(_ bridge: Bridge, received line: CarLine) {
        snapshot.carLines.append((line.time, line.text))
        trim()
        changed()
    }

    public func bridge(_ bridge: Bridge, noted text: String, at time: Instant) {
        appendNotice(noticeText(text))
    }

    private func trim() {
        let limit = max(0, historyLimit)
        if snapshot.carLines.count > limit { snapshot.carLines.removeFirst(snapshot.carLines.count - limit) }
        if snapshot.notices.count > limit { snapshot.notices.removeFirst(snapshot.notices.count - limit) }
    }

    private func changed() {
        onChange?()
        for handler in changeHandlers { handler() }
    }
}
