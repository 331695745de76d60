import DriveCore
import DriveLink
import DriveView

/// What every view of `carbridge run` reads (the live view, the dashboard, systemd's status): the drive
/// state, the link's name and status, the last frame and its time, the frames sent, the car's recent lines
/// with their times, the car's status table and battery warning, notices, feedback cues and the inputs in use.
///
/// The first of the run's subscribers: it folds every `RunEvent` into one value, `snapshot`, before the
/// views that follow it in the list are told the same event. `version` moves whenever the snapshot
/// changed, so a view redraws only then. Everything happens on the run's event loop.
public final class RunViewModel: RunSubscriber {
    /// Everything shown, as a value.
    public private(set) var snapshot: RunSnapshot
    /// Moves on every change of `snapshot`.
    public private(set) var version = 0
    /// How many car lines and notices are kept (the oldest go first).
    public var historyLimit = 50 {
        didSet { trim() }
    }
    /// How a bridge notice is shown among the notices (the live view shows it the way its diverted
    /// log shows every other line; by default the bare text).
    public var noticeText: (String) -> String = { $0 }
    /// The open input devices, in the order they were opened.
    private var devices: [(key: String, description: String)] = []
    /// The pads whose battery is low, with their warnings, in the order they warned.
    private var padBatteryWarnings: [(key: String, text: String)] = []

    /// How many feedback events are kept (the oldest go first).
    public static let feedbackLimit = 10

    /// An empty view of the link `linkName` (engine off, nothing sent, link not started).
    public init(linkName: String, linkStatus: String = LinkState.down(reason: "not started").description) {
        snapshot = RunSnapshot(linkName: linkName, linkStatus: linkStatus)
    }

    /// A view of `bridge` as it stands now; subscribe it to `bridge.events` to follow it.
    public convenience init(of bridge: Bridge) {
        self.init(linkName: bridge.link.name, linkStatus: bridge.link.state.description)
        snapshot.state = bridge.state
        snapshot.framesSent = bridge.framesSent
    }

    public func receive(_ event: RunEvent) {
        switch event {
        case .step(let step):
            guard snapshot.apply(step) else { return }
        case .link(let state):
            snapshot.linkStatus = state.description
        case .carLine(let line):
            // A status line goes into the table only: one every few seconds would push the car's other
            // lines out of the list.
            if let status = CarStatusLine(line.text) {
                snapshot.carStatus.update(status, at: line.time)
            } else {
                snapshot.carLines.append((line.time, line.text))
                trim()
            }
        case .carBattery(let change, _):
            snapshot.batteryWarning = change.isLow ? change.description : nil
        case .notice(let text, _):
            snapshot.notices.append(noticeText(text))
            trim()
        case .logLine(let line):
            snapshot.notices.append(line)
            trim()
        case .device(let change):
            devices.removeAll { $0.key == change.key }
            if change.opened { devices.append((change.key, change.description)) }
            snapshot.inputs = devices.map(\.description)
            // A pad that went takes its battery warning with it (a reconnected pad reads its battery afresh).
            if !change.opened, padBatteryWarnings.contains(where: { $0.key == change.key }) {
                padBatteryWarnings.removeAll { $0.key == change.key }
                snapshot.padBatteryWarnings = padBatteryWarnings.map(\.text)
            }
        case .padBattery(let change):
            padBatteryWarnings.removeAll { $0.key == change.key }
            if change.isLow { padBatteryWarnings.append((change.key, change.description)) }
            snapshot.padBatteryWarnings = padBatteryWarnings.map(\.text)
        case .handsFree(let reading):
            guard reading != snapshot.handsFree else { return }
            snapshot.handsFree = reading
        case .join(let invitation):
            snapshot.join = invitation
        case .feedback(let cue, let time):
            snapshot.feedback.append((time, cue))
            if snapshot.feedback.count > Self.feedbackLimit {
                snapshot.feedback.removeFirst(snapshot.feedback.count - Self.feedbackLimit)
            }
        case .linkStatistics:
            return
        }
        version &+= 1
    }

    private func trim() {
        let limit = max(0, historyLimit)
        if snapshot.carLines.count > limit { snapshot.carLines.removeFirst(snapshot.carLines.count - limit) }
        if snapshot.notices.count > limit { snapshot.notices.removeFirst(snapshot.notices.count - limit) }
    }
}

extension RunSnapshot {
    /// Takes in a step of the machine (its frames, its state); false when it changes nothing shown.
    fileprivate mutating func apply(_ step: DriveStep) -> Bool {
        guard !step.frames.isEmpty || step.state != state else { return false }
        if let last = step.frames.last {
            lastFrame = (last, step.time)
            framesSent += step.frames.count
        }
        state = step.state
        return true
    }
}
