import DriveCore
import DriveLink
import DriveSystem
import Logging

/// Wires one drive state machine to one link on one event loop: controls in, frames out,
/// one timer armed at the machine's next deadline, link state changes turned into safety events.
///
/// The machine decides what is sent and when; the bridge only delivers. Every input source
/// (keyboard, gamepad, tilt, replay) calls `apply(_:)`. What happens (frames delivered, link state
/// changes, car lines, notices, the drive state) is reported to a `BridgeObserver`, the run's
/// `RunViewModel`; the bridge keeps none of it for display.
public final class Bridge {
    /// The event loop everything runs on.
    public let loop: EventLoop
    /// The link to the car.
    public let link: CarLink
    private var machine: DriveMachine
    private let logger: Logger
    /// Follows the machine's `nextDeadline`. A `let`, so arming it after every control retains nothing (and not
    /// lazy: a lazy property is checked for exclusive access at every use).
    private let timer: DeadlineTimer
    private var shuttingDown = false
    /// The kiosk's turn limit (`kiosk.session_limit_s`), when set, and its timer.
    private var turn: SessionLimit?
    private let turnTimer: DeadlineTimer
    /// What the link's callbacks and a flush's or a shutdown's end hold weakly instead of the bridge: every
    /// input report retains and releases the bridge twice (the inputs' control and state closures hold it),
    /// and a weak reference to it sent each of those down the runtime's slow path. Set at the end of `init`.
    private var lifeline: Lifeline<Bridge>!

    /// How many frames were handed to the link.
    public private(set) var framesSent = 0
    /// Told about everything that happens here (the run's view model); the bridge keeps it.
    ///
    /// Strongly, not weakly: every input report tells it, and a weak reference would give the observer a side
    /// table (a weak load, and a retain and release down the runtime's slow path: about 300 instructions per
    /// report). An observer must not hold the bridge strongly, or must let go of it (`DashboardLoop.detach`).
    public var observer: (any BridgeObserver)?
    /// Log every car line and notice (off while the observer shows them itself: the run view, whose
    /// diverted log would otherwise show them twice).
    public var logsReports = true
    /// Called each time the link comes up.
    public var onLinkUp: (() -> Void)?
    /// Called with every frame handed to the link (for tests and dry runs).
    public var onFrame: ((Frame, Instant) -> Void)?

    /// Creates a bridge; call `start()` to connect. With `sessionLimit` (kiosk), a turn that began
    /// when the engine went on ends that long after with the engine off (`SessionLimit`).
    public init(settings: DriveSettings, link: CarLink, loop: EventLoop, logger: Logger, sessionLimit: Duration? = nil) {
        self.machine = DriveMachine(settings: settings)
        self.turn = sessionLimit.map { SessionLimit(limit: $0) }
        self.link = link
        self.loop = loop
        self.logger = logger
        timer = DeadlineTimer(loop: loop)
        turnTimer = DeadlineTimer(loop: loop)
        lifeline = Lifeline(self)
        // The timers are the bridge's own and are cancelled when they go with it: unowned.
        timer.setAction { [unowned self] in self.timerFired() }
        turnTimer.setAction { [unowned self] in self.turnTimeUp() }
        link.onStateChange = { [weak lifeline] state in lifeline?.owner.linkChanged(to: state) }
        link.onLine = { [weak lifeline] line in lifeline?.owner.carSaid(line) }
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
        // The observer is loaded once per control: each weak load is a side-table lookup with a retain and
        // a release through it, and a control made three (137 instructions less per stick report).
        let observer = self.observer
        deliver(frames, at: now, to: observer)
        observer?.bridge(self, applied: control, at: now)
        changed(observer)
    }

    /// SIGTSTP: S := 0 and the stop frame (engine stays on), flushed to the car within `flushWithin`,
    /// then `done` with how the flush ended; the process may then suspend.
    public func suspend(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        loop.assertOnLoopThread()
        let now = loop.now()
        let frames = machine.handle(.suspend, at: now)
        deliver(frames, at: now)
        changed()
        link.flush(within: flushWithin) { [weak lifeline] result in
            lifeline?.owner.logger.info("suspending: \(frames.isEmpty ? "engine off, nothing to stop" : "stop frame \(frames.map(\.text).joined(separator: " ")) \(result)")")
            done(result)
        }
    }

    /// A notice for the driver: logged (unless `logsReports` is off) and reported to the observer.
    public func note(_ text: String) {
        loop.assertOnLoopThread()
        if logsReports { logger.notice("\(text)") }
        observer?.bridge(self, noted: text, at: loop.now())
    }

    /// Engine off (if on), flush it to the car within `flushWithin`, close the link, then call `done`.
    public func shutdown(reason: String, flushWithin: Duration = ShutdownConfiguration().flushWindow, then done: @escaping () -> Void) {
        loop.assertOnLoopThread()
        guard !shuttingDown else { return }
        let now = loop.now()
        let frames = machine.handle(.shutdown, at: now)
        deliver(frames, at: now)
        shuttingDown = true
        timer.cancel()
        turnTimer.cancel()
        logger.info("shutting down (\(reason))")
        changed()
        let sent = frames.map(\.text).joined(separator: " ")
        link.shutdown(flushWithin: flushWithin) { [weak lifeline] result in
            let bridge = lifeline?.owner
            if let bridge, let holds = bridge.link.holdStatistics, holds.motionFramesWritten > 0 {
                // What the kernel-queue rule cost this run (kernel scenario 22 reads it).
                bridge.logger.info("link frames: \(holds)")
            }
            if !sent.isEmpty {
                bridge?.logger.info("shutdown: \(sent) \(result)")
            } else if result == .linkDown {
                bridge?.logger.info("shutdown: the link was down; the car's next connection starts with the handshake")
            }
            done()
        }
    }

    private func deliver(_ frames: FrameBatch, at now: Instant) { deliver(frames, at: now, to: observer) }

    private func deliver(_ frames: FrameBatch, at now: Instant, to observer: (any BridgeObserver)?) {
        for frame in frames {
            if link.state.isUp {
                link.send(frame)
                framesSent += 1
                onFrame?(frame, now)
                observer?.bridge(self, delivered: frame, at: now)
            }
        }
        rearm()
    }

    private func rearm() {
        timer.arm(at: shuttingDown ? nil : inspectMachine { $0.nextDeadline })
    }

    /// Reads the machine in place: a getter called on the stored struct copies all of it first (168 bytes,
    /// a memcpy after every control).
    @inline(__always)
    private func inspectMachine<T>(_ body: (inout DriveMachine) -> T) -> T { body(&machine) }

    private func timerFired() {
        let now = loop.now()
        let before = machine.state.engineOn
        let frames = machine.tick(at: now)
        if before && !machine.state.engineOn { note("idle timeout: engine off") }
        let observer = self.observer
        deliver(frames, at: now, to: observer)
        changed(observer)
    }

    private func linkChanged(to state: LinkState) {
        let now = loop.now()
        observer?.bridge(self, linkChanged: state)
        switch state {
        case .up:
            note("link up: \(link.name)")
            deliver(machine.handle(.linkUp, at: now), at: now)
            onLinkUp?()
        case .down(let reason):
            let moving = machine.state.speed > 0
            deliver(machine.handle(.linkLost, at: now), at: now)
            note("link down: \(reason)\(moving ? " (speed reset to 0)" : "")")
        case .connecting, .closed:
            break
        }
        changed()
    }

    private func carSaid(_ line: CarLine) {
        if logsReports { logger.info("car: \(line.text)") }
        observer?.bridge(self, received: line)
    }

    /// Tells the observer the drive state (it may not have changed) and follows the turn limit.
    private func changed() { changed(observer) }

    private func changed(_ observer: (any BridgeObserver)?) {
        observer?.bridge(self, stateIs: machine.state)
        followTurn()
    }

    /// Kiosk: the engine's state starts or ends a turn; the turn timer follows its end.
    private func followTurn() {
        guard var turn else { return }
        turn.follow(engineOn: machine.state.engineOn, at: loop.now())
        self.turn = turn
        turnTimer.arm(at: shuttingDown ? nil : turn.deadline)
    }

    /// The turn's time is up: the engine goes off the normal way (docs/protocol.md §6): the stop frame
    /// first when the car is moving (S := 0), then `E,0,0,0`. The next Engine press starts a new turn.
    private func turnTimeUp() {
        let now = loop.now()
        guard !shuttingDown, let turn, turn.isOver(at: now), machine.state.engineOn else { return followTurn() }
        if machine.state.speed > 0 {
            deliver(machine.handle(.suspend, at: now), at: now)  // S := 0 and the stop frame; the engine still on
        }
        deliver(machine.handle(.engine, at: now), at: now)  // engine off: E,0,0,0
        note("session limit (\(Self.seconds(turn.limit)) s): engine off; Engine starts the next turn")
        changed()
    }

    private static func seconds(_ duration: Duration) -> String {
        let ms = duration.nanoseconds / 1_000_000
        return ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)"
    }
}
