import DriveCore
import DriveLink
import DriveSystem
import Logging

/// Wires one drive state machine to one link on one event loop: controls in, frames out,
/// one timer armed at the machine's next deadline, link state changes turned into safety events.
///
/// The machine decides what is sent and when (the kiosk turn's end included); the bridge only delivers.
/// Every input source (keyboard, gamepad, tilt, replay, a browser) calls `apply(_:)`. What happens
/// (frames delivered, link state changes, car lines, notices, the drive state) is published to the run's
/// `RunEvents`; the bridge keeps none of it for display.
public final class Bridge {
    /// The event loop everything runs on.
    public let loop: EventLoop
    /// The link to the car.
    public let link: CarLink
    /// Where what happens is published.
    public let events: RunEvents
    private var machine: DriveMachine
    private let logger: Logger
    /// Follows the machine's `nextDeadline`.
    private let timer: DeadlineTimer
    private var shuttingDown = false
    /// True while frames are handed to the link: a link change told then (a write that failed) waits in
    /// `deferredLinkStates` until the current event's step is published, so steps go out in order.
    private var delivering = false
    private var deferredLinkStates: [LinkState] = []

    /// How many frames were handed to the link.
    public private(set) var framesSent = 0
    /// Log every car line and notice (off while the live view shows them itself, with the rest of the log).
    public var logsReports = true
    /// `[car] low_battery`: watched in the car's status lines; a fall below it is published and noted.
    public var lowBattery: LowBatteryAlarm?
    /// Called with every frame handed to the link (for tests and dry runs).
    public var onFrame: ((Frame, Instant) -> Void)?

    /// Creates a bridge publishing to `events`; call `start()` to connect. With `sessionLimit` (kiosk), a turn
    /// that began when the engine went on ends that long after with the engine off (`DriveMachine`).
    public init(
        settings: DriveSettings, link: CarLink, loop: EventLoop, logger: Logger, events: RunEvents = RunEvents(),
        sessionLimit: Duration? = nil
    ) {
        self.machine = DriveMachine(settings: settings, sessionLimit: sessionLimit)
        self.link = link
        self.loop = loop
        self.logger = logger
        self.events = events
        timer = DeadlineTimer(loop: loop)
        // The timer is the bridge's own, and `deinit` takes the link's callbacks back: none outlives it.
        timer.setAction { [unowned self] in self.timerFired() }
        link.onStateChange = { [unowned self] state in
            if self.delivering { self.deferredLinkStates.append(state) } else { self.linkChanged(to: state) }
        }
        link.onLine = { [unowned self] line in self.carSaid(line) }
        link.onNotice = { [unowned self] text in self.note(text) }
    }

    deinit {
        link.onStateChange = nil
        link.onLine = nil
        link.onNotice = nil
    }

    /// The drive state right now.
    public var state: DriveState { machine.state }
    /// True while the link is up (the machine has seen `.linkUp` and no loss since).
    public var linkIsUp: Bool { machine.linkIsUp }

    /// Starts the link (connecting in the background).
    public func start() {
        loop.assertOnLoopThread()
        logger.info("connecting to \(link.name)")
        link.start()
    }

    /// Applies a control from any input source now.
    public func apply(_ control: Control) {
        loop.assertOnLoopThread()
        guard !shuttingDown else { return }
        let now = loop.now()
        let frames = machine.handle(control, at: now)
        if control == .speedUp, frames.isEmpty, machine.state.engineOn {
            // The machine refused motion; say why when it is not the driver's own limit.
            if !machine.linkIsUp {
                note("link \(link.state): Speed+ ignored")
            } else if machine.inputMissing {
                note("the steering device is missing: Speed+ ignored until it is back")
            }
        }
        let sent = deliver(frames, at: now)
        events.publish(.step(DriveStep(control: control, frames: sent, state: machine.state, time: now)))
        linkChangesAfterDelivery()
    }

    /// SIGTSTP: S := 0 and the stop frame (engine stays on), flushed to the car within `flushWithin`,
    /// then `done` with how the flush ended; the process may then suspend.
    public func suspend(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        loop.assertOnLoopThread()
        let now = loop.now()
        let frames = machine.handle(.suspend, at: now)
        publishStep(deliver(frames, at: now), at: now)
        linkChangesAfterDelivery()
        let logger = self.logger
        link.flush(within: flushWithin) { result in
            logger.info("suspending: \(frames.isEmpty ? "engine off, nothing to stop" : "stop frame \(frames.map(\.text).joined(separator: " ")) \(result)")")
            done(result)
        }
    }

    /// A notice for the driver: logged (unless `logsReports` is off) and published.
    public func note(_ text: String) {
        loop.assertOnLoopThread()
        if logsReports { logger.notice("\(text)") }
        events.publish(.notice(text, at: loop.now()))
    }

    /// Engine off (if on), flush it to the car within `flushWithin`, close the link, then call `done`.
    public func shutdown(reason: String, flushWithin: Duration = ShutdownConfiguration().flushWindow, then done: @escaping () -> Void) {
        loop.assertOnLoopThread()
        guard !shuttingDown else { return }
        let now = loop.now()
        let frames = machine.handle(.shutdown, at: now)
        let delivered = deliver(frames, at: now)
        shuttingDown = true
        timer.cancel()
        logger.info("shutting down (\(reason))")
        publishStep(delivered, at: now)
        linkChangesAfterDelivery()
        let sent = frames.map(\.text).joined(separator: " ")
        let (link, logger) = (self.link, self.logger)
        link.shutdown(flushWithin: flushWithin) { result in
            if let holds = link.holdStatistics, holds.motionFramesWritten > 0 {
                // What the kernel-queue rule cost this run (the kernel harness's stick scenario reads it).
                logger.info("link frames: \(holds)")
            }
            if !sent.isEmpty {
                logger.info("shutdown: \(sent) \(result)")
            } else if result == .linkDown {
                logger.info("shutdown: the link was down; the car's next connection starts with the handshake")
            }
            done()
        }
    }

    /// Hands `frames` to the link while it is up, re-arms the timer, and returns the frames handed over. A
    /// frame whose write lost the link (the link is no longer up after `send`) is not one of them, and the
    /// link's change waits for `linkChangesAfterDelivery`.
    private func deliver(_ frames: FrameBatch, at now: Instant) -> FrameBatch {
        var sent = FrameBatch()
        delivering = true
        for frame in frames where link.state.isUp {
            link.send(frame)
            guard link.state.isUp else { break }
            framesSent += 1
            onFrame?(frame, now)
            sent.append(frame)
        }
        delivering = false
        timer.arm(at: shuttingDown ? nil : machine.nextDeadline)
        return sent
    }

    /// Tells the link changes that came during a delivery, now that the step that delivered is published.
    private func linkChangesAfterDelivery() {
        while !delivering, !deferredLinkStates.isEmpty {
            linkChanged(to: deferredLinkStates.removeFirst())
        }
    }

    /// Publishes a step that no control caused (a tick, a link change, a suspend, the shutdown).
    private func publishStep(_ frames: FrameBatch, at now: Instant, timedStop: DriveMachine.TimedStop? = nil) {
        events.publish(.step(DriveStep(frames: frames, state: machine.state, time: now, timedStop: timedStop)))
    }

    private func timerFired() {
        let now = loop.now()
        let frames = machine.tick(at: now)
        if machine.lastTimedStop == .idleTimeout { note("idle timeout: engine off") }
        let stop = machine.lastTimedStop
        publishStep(deliver(frames, at: now), at: now, timedStop: stop)
        if case .turnLimit(let limit)? = stop {
            note("session limit (\(Self.seconds(limit)) s): engine off; Engine starts the next turn")
        }
        linkChangesAfterDelivery()
    }

    private func linkChanged(to state: LinkState) {
        let now = loop.now()
        if let statistics = link.statistics { events.publish(.linkStatistics(statistics)) }
        events.publish(.link(state))
        switch state {
        case .up:
            note("link up: \(link.name)")
            publishStep(deliver(machine.handle(.linkUp, at: now), at: now), at: now)
            // The handshake's own write may have lost the link again.
            linkChangesAfterDelivery()
        case .down(let reason):
            let moving = machine.state.speed > 0
            publishStep(deliver(machine.handle(.linkLost, at: now), at: now), at: now)
            note("link down: \(reason)\(moving ? " (speed reset to 0)" : "")")
        case .connecting, .closed:
            publishStep(FrameBatch(), at: now)
        }
    }

    private func carSaid(_ line: CarLine) {
        let status = CarStatusLine(line.text)
        // A status line comes every few seconds for as long as the car is on: at debug, so it does not
        // fill the journal; every other line at info.
        if logsReports { logger.log(level: status == nil ? .info : .debug, "car: \(line.text)") }
        events.publish(.carLine(line))
        guard let status, lowBattery != nil, let change = lowBattery?.observe(status) else { return }
        events.publish(.carBattery(change, at: line.time))
        // Only a warning: the car's own firmware decides whether a low battery stops it.
        if change.isLow { note(change.description) }
    }

    private static func seconds(_ duration: Duration) -> String {
        let ms = duration.nanoseconds / 1_000_000
        return ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)"
    }
}
