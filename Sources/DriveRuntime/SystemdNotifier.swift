import DriveCore
import DriveSystem
import DriveView

/// systemd's service notifications (sd_notify(3), through `SystemdNotifySocket`) for `carbridge run` as a `Type=notify`
/// service (config/carbridge.service, config/carbridge@.service):
///
/// - `READY=1` (with the first `STATUS=`) from the event loop's first turn: the service counts as
///   started once the loop runs, not when the process exists.
/// - `WATCHDOG=1` from a timer on the event loop every half `WATCHDOG_USEC` (`WatchdogSec=`), only when
///   the watchdog is meant for this process (`WATCHDOG_PID`, as `sd_watchdog_enabled` checks it). The
///   pings come from the loop itself, so a loop that hangs stops them: systemd kills the process and
///   restarts it, and the new process's safety handshake stops the car.
/// - `STATUS=engine on, speed 40 forward, link up` (`systemctl status`): sent when the engine, the
///   speed, the direction or the link state changes, not on every frame, and at most once per
///   `statusInterval` (a change within it is sent when it ends; only the newest counts).
/// - `STOPPING=1` when the run starts shutting down.
///
/// Without `NOTIFY_SOCKET` (not under systemd) there is no notifier at all: no timer, no wake-up.
/// A message is one datagram to systemd's socket; it does not block as long as PID 1 reads it.
public final class SystemdNotifier {
    /// How often `WATCHDOG=1` is sent (half the watchdog timeout); nil when there is no watchdog.
    public let watchdogInterval: Duration?
    private let loop: EventLoop
    private let send: (String) -> Void
    private var status: StatusThrottle
    private lazy var statusTimer = DeadlineTimer(loop: loop) { [weak self] in self?.statusDue() }
    private var watchdogTimer: EventLoop.TimerID?
    private var started = false
    private var stopped = false
    /// What the last status text was made from (compared without formatting on every change).
    private var lastKey: StatusKey?

    /// A notifier that hands each message to `send`; `watchdogTimeout` is `WATCHDOG_USEC` (nil: no watchdog).
    public init(
        loop: EventLoop, watchdogTimeout: Duration?, statusInterval: Duration = .milliseconds(500),
        send: @escaping (String) -> Void
    ) {
        self.loop = loop
        self.send = send
        self.status = StatusThrottle(minimumInterval: statusInterval)
        self.watchdogInterval = watchdogTimeout.map { max($0 / 2, .milliseconds(1)) }
    }

    /// The notifier for this process when systemd asked for notifications (`NOTIFY_SOCKET` is set),
    /// with the watchdog when `WATCHDOG_USEC` is for this process (`WATCHDOG_PID`); nil otherwise.
    /// Throws a `CarbridgeError` naming a variable whose value is not what systemd sets.
    public static func forThisProcess(loop: EventLoop) throws -> SystemdNotifier? {
        guard let socket = try SystemdNotifySocket.fromEnvironment() else { return nil }
        return SystemdNotifier(loop: loop, watchdogTimeout: try SystemdNotifySocket.watchdogTimeout()) { message in
            // As with sd_notify(3), a message systemd cannot take is its to notice: a missed READY=1
            // fails the start, missed pings end in the watchdog's kill, both in the journal.
            try? socket.send(message)
        }
    }

    /// From the loop's next turn: `READY=1` with the current status, then the watchdog pings.
    public func start() {
        loop.execute { [weak self] in
            guard let self, !self.started, !self.stopped else { return }
            self.started = true
            var message = "READY=1"
            if let text = self.status.latest {
                message += "\nSTATUS=" + text
                self.status.markSent(text, at: self.loop.now())
            }
            if self.watchdogInterval != nil { message += "\nWATCHDOG=1" }
            self.send(message)
            self.scheduleWatchdog()
        }
    }

    /// The status to show (sent on change, rate-limited; held until `READY=1` went out).
    public func setStatus(_ text: String) {
        guard !stopped else { return }
        let now = loop.now()
        guard started else {
            status.hold(text)
            return
        }
        if let due = status.offer(text, at: now) {
            send("STATUS=" + due)
        }
        statusTimer.arm(at: status.deadline)
    }

    /// Shows `snapshot`'s engine, speed, direction and link state as the status, when they changed.
    public func report(_ snapshot: RunSnapshot) {
        let key = StatusKey(
            engineOn: snapshot.state.engineOn, speed: snapshot.state.speed, direction: snapshot.state.direction,
            link: snapshot.linkStatus)
        guard key != lastKey else { return }
        lastKey = key
        setStatus(Self.statusText(state: snapshot.state, link: snapshot.linkStatus))
    }

    /// `STOPPING=1` (once), with the status; the watchdog keeps pinging while the loop runs the shutdown.
    public func stopping() {
        guard !stopped else { return }
        stopped = true
        statusTimer.cancel()
        send("STOPPING=1\nSTATUS=stopping")
    }

    /// The status text for a drive state and a link state: `engine on, speed 40 forward, link up`.
    public static func statusText(state: DriveState, link: String) -> String {
        let engine = state.engineOn ? "engine on" : "engine off"
        return "\(engine), speed \(state.speed) \(state.direction == 1 ? "forward" : "reverse"), link \(link)"
    }

    private struct StatusKey: Equatable {
        var engineOn: Bool
        var speed: Int
        var direction: Int
        var link: String
    }

    private func statusDue() {
        guard !stopped else { return }
        if let due = status.due(at: loop.now()) { send("STATUS=" + due) }
        statusTimer.arm(at: status.deadline)
    }

    private func scheduleWatchdog() {
        guard let interval = watchdogInterval else { return }
        watchdogTimer = loop.schedule(after: interval) { [weak self] in
            guard let self else { return }
            self.send("WATCHDOG=1")
            self.scheduleWatchdog()
        }
    }
}

/// Status updates at most once per `minimumInterval`, only when the text changed; a change within the
/// interval waits until it ends (only the newest text is kept). Pure: instants are handed in.
public struct StatusThrottle: Sendable {
    /// The shortest time between two updates.
    public let minimumInterval: Duration
    /// The last text sent, and when.
    public private(set) var sent: (text: String, at: Instant)?
    /// A newer text waiting for the interval to end.
    public private(set) var pending: String?

    /// A throttle that has sent nothing yet.
    public init(minimumInterval: Duration) {
        self.minimumInterval = minimumInterval
    }

    /// The newest text known (pending or sent).
    public var latest: String? { pending ?? sent?.text }

    /// When the pending text is due; nil when nothing waits.
    public var deadline: Instant? {
        guard pending != nil, let sent else { return nil }
        return sent.at.advanced(by: minimumInterval)
    }

    /// Keeps `text` as the newest without sending it (before sending may start).
    public mutating func hold(_ text: String) {
        pending = text == sent?.text ? nil : text
    }

    /// Records that `text` went out at `now` (by other means, e.g. with `READY=1`).
    public mutating func markSent(_ text: String, at now: Instant) {
        sent = (text, now)
        pending = nil
    }

    /// Offers `text` at `now`: the text to send now, or nil when it is unchanged or must wait (then
    /// `deadline` says until when).
    public mutating func offer(_ text: String, at now: Instant) -> String? {
        if text == sent?.text {
            pending = nil
            return nil
        }
        if let sent, now < sent.at.advanced(by: minimumInterval) {
            pending = text
            return nil
        }
        markSent(text, at: now)
        return text
    }

    /// At `now` (the deadline): the pending text to send, if its time has come.
    public mutating func due(at now: Instant) -> String? {
        guard let pending, let deadline, now >= deadline else { return nil }
        markSent(pending, at: now)
        return pending
    }
}
