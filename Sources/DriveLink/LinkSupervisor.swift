import DriveCore

/// The lifecycle of every car link as a pure state machine: connect, give up an attempt, back off and
/// reconnect, flush, shut down, and the statistics, for any `LinkTransport`. It performs nothing: each
/// event returns the actions a `SupervisedLink` performs (open the transport, arm or cancel a timer,
/// report a state, finish flushes), as async-http-client's connection pool state machine does, so every
/// transition and every fault ordering is tested with instants alone.
///
/// ```
/// idle ──start──▶ connecting ──opened──▶ up ──shutdown──▶ flushing ──drained / window over──▶ closing ──closed──▶ closed
///                  ▲     │                │                  │                                  ▲
///                  │   failed / timed out lost / stalled     lost ──────────────────────────────┼─────────────▶ closed
///                  │     ▼                ▼                                                     │
///                  └─retry─ backingOff ◀──┘      (shutdown in idle ▶ closed; in connecting, backingOff ▶ closing)
/// ```
///
/// The transport reports its own losses after it has closed what it had (it alone knows how: an abortive
/// close of a socket, a Bluetooth disconnect), so a loss needs no close action; the supervisor closes the
/// transport only to give up an attempt and to shut down.
public struct LinkSupervisor: Sendable {
    /// Where the link stands.
    public enum State: Hashable, Sendable {
        /// Created, not started.
        case idle
        /// Connect attempt `attempt` is under way, bounded by the connect timer.
        case connecting(attempt: Int)
        /// Connected: frames go out.
        case up
        /// Shutting down while connected: what is queued drains until `deadline`; frames may still be sent.
        case flushing(deadline: Instant)
        /// Shutting down: the transport is closing; the shutdown ends with `result` once it has.
        case closing(result: FlushResult)
        /// Lost or failed for `reason`; the retry timer starts the next attempt.
        case backingOff(reason: String)
        /// Shut down for good.
        case closed

        /// What the link reports.
        public var linkState: LinkState {
            switch self {
            case .idle: return .down(reason: "not started")
            case .connecting: return .connecting
            case .up, .flushing, .closing: return .up
            case .backingOff(let reason): return .down(reason: reason)
            case .closed: return .closed
            }
        }

        /// True while frames may be handed to the transport (also while a shutdown flushes).
        public var isConnected: Bool {
            switch self {
            case .up, .flushing: return true
            case .idle, .connecting, .closing, .backingOff, .closed: return false
            }
        }
    }

    /// The supervisor's timers; each runs only in the states that need it.
    public enum Timer: Hashable, Sendable, CaseIterable {
        /// Gives up the connect attempt.
        case connect
        /// Starts the next attempt after the back-off.
        case retry
        /// The earliest flush deadline (a flush waiter's, or the shutdown's window).
        case flush
    }

    /// How closely the transport reports its queue draining.
    public enum DrainWatch: Hashable, Sendable {
        /// Nobody waits: no reports, no extra wake-ups.
        case off
        /// A flush waits: report each look at the queue; the stall rule applies.
        case flush
        /// A shutdown flushes: report each look; the flush window decides, not the stall rule.
        case shutdown
    }

    /// What the link performs.
    public enum Action: Hashable, Sendable {
        /// Tell the link's state (the shell tells `onStateChange` when it changed).
        case report(LinkState)
        /// Start connect attempt `attempt` on the transport.
        case open(attempt: Int)
        /// The attempt took too long: the transport gives it up and says why (as a `failed` event).
        case abandonAttempt
        /// Close the transport for a shutdown that ends with `result` (clean when delivered, abortive
        /// otherwise), then report `closed()`.
        case close(result: FlushResult)
        /// Arm `timer` for `at` (replacing an armed one).
        case arm(Timer, at: Instant)
        /// Cancel `timer` if armed.
        case cancel(Timer)
        /// Change how the transport reports its queue draining.
        case watchDrain(DrainWatch)
        /// Call these flush waiters with `result`.
        case finishFlushes([Int], FlushResult)
        /// Call every shutdown waiter with `result`.
        case finishShutdown(FlushResult)
    }

    /// What the lifecycle did so far (all connections).
    public struct Statistics: Hashable, Sendable {
        /// Connect attempts started.
        public var connectAttempts = 0
        /// Attempts that connected.
        public var connectionsMade = 0
        /// Connections closed because the car took nothing for the stall timeout.
        public var stalls = 0
        /// The back-off before the most recent reconnect (nil before the first loss).
        public var lastRetryDelay: Duration?

        /// No attempt yet.
        public init() {}
    }

    /// Where the link stands.
    public private(set) var state: State = .idle
    /// What the lifecycle did so far.
    public private(set) var statistics = Statistics()
    /// The reconnect delays.
    public private(set) var backoff: Backoff
    /// How long an attempt may take.
    public var connectTimeout: Duration

    private var attempt = 0
    /// Flush waiters still waiting, by id, with their deadlines.
    private var flushes: [(id: Int, deadline: Instant)] = []
    private var drainWatch = DrainWatch.off

    /// A supervisor in `idle`.
    public init(connectTimeout: Duration, backoff: Backoff = Backoff()) {
        self.connectTimeout = connectTimeout
        self.backoff = backoff
    }

    // MARK: events

    /// `start()`: idle → connecting.
    public mutating func start(at now: Instant) -> [Action] {
        guard case .idle = state else { return [] }
        return beginAttempt(at: now)
    }

    /// The transport connected attempt `attempt`: connecting → up.
    public mutating func opened(attempt opened: Int) -> [Action] {
        guard case .connecting(let current) = state, current == opened else { return [] }
        state = .up
        backoff.reset()
        statistics.connectionsMade += 1
        return [.cancel(.connect), .report(.up)]
    }

    /// The transport failed an attempt or lost its connection (having closed what it had); `stalled` when
    /// the car took nothing for the stall timeout. Connecting or up → backingOff; flushing → closed.
    public mutating func failed(_ reason: String, stalled: Bool, at now: Instant) -> [Action] {
        switch state {
        case .connecting, .up:
            if stalled { statistics.stalls += 1 }
            var actions: [Action] = [.cancel(.connect)]
            actions += endFlushes(.linkDown)
            let delay = backoff.next()
            statistics.lastRetryDelay = delay
            state = .backingOff(reason: reason)
            actions += [.arm(.retry, at: now.advanced(by: delay)), .report(.down(reason: reason))]
            return actions
        case .flushing:
            if stalled { statistics.stalls += 1 }
            var actions = endFlushes(.linkDown)
            state = .closing(result: .linkDown)
            actions.append(.close(result: .linkDown))
            return actions
        case .idle, .closing, .backingOff, .closed:
            return []
        }
    }

    /// The connect timer fired: the transport gives the attempt up (its `failed` event follows).
    public mutating func connectTimedOut() -> [Action] {
        guard case .connecting = state else { return [] }
        return [.abandonAttempt]
    }

    /// The retry timer fired: backingOff → connecting.
    public mutating func retryDue(at now: Instant) -> [Action] {
        guard case .backingOff = state else { return [] }
        return beginAttempt(at: now)
    }

    /// A flush waiter `id` wants everything queued delivered within `within`; `drained` is the
    /// transport's answer right now.
    public mutating func flush(id: Int, within: Duration, drained: Bool, at now: Instant) -> [Action] {
        guard state.isConnected else { return [.finishFlushes([id], .linkDown)] }
        if drained { return [.finishFlushes([id], .delivered)] }
        flushes.append((id, now.advanced(by: within)))
        var actions: [Action] = []
        if drainWatch == .off { actions.append(setDrainWatch(.flush)) }
        actions.append(armFlushTimer())
        return actions
    }

    /// The transport looked at its queue while a flush or a shutdown waits.
    public mutating func progressed(drained: Bool) -> [Action] {
        guard drained, state.isConnected else { return [] }
        var actions = endFlushes(.delivered)
        if case .flushing = state {
            state = .closing(result: .delivered)
            actions.append(.close(result: .delivered))
        }
        return actions
    }

    /// The flush timer fired: waiters past their deadline get `.timedOut`; a shutdown whose window is over
    /// closes abortively.
    public mutating func flushTimerFired(at now: Instant) -> [Action] {
        let due = flushes.filter { $0.deadline <= now }.map(\.id)
        flushes.removeAll { $0.deadline <= now }
        var actions: [Action] = due.isEmpty ? [] : [.finishFlushes(due, .timedOut)]
        if case .flushing(let deadline) = state, deadline <= now {
            actions += endFlushes(.timedOut)
            state = .closing(result: .timedOut)
            actions.append(.close(result: .timedOut))
            return actions
        }
        if flushes.isEmpty, case .up = state {
            actions.append(setDrainWatch(.off))
        } else if !flushes.isEmpty || isFlushingForShutdown {
            actions.append(armFlushTimer())
        }
        return actions
    }

    /// `shutdown(flushWithin:)`: stops reconnecting; flushes while up, then closes. `drained` is the
    /// transport's answer right now. A shutdown already under way takes the new waiter along.
    public mutating func shutdown(within: Duration, drained: Bool, at now: Instant) -> [Action] {
        switch state {
        case .idle:
            state = .closed
            return [.report(.closed), .finishShutdown(.linkDown)]
        case .connecting:
            state = .closing(result: .linkDown)
            return [.cancel(.connect), .close(result: .linkDown)]
        case .backingOff:
            state = .closing(result: .linkDown)
            return [.cancel(.retry), .close(result: .linkDown)]
        case .up:
            if drained {
                var actions = endFlushes(.delivered)
                state = .closing(result: .delivered)
                actions.append(.close(result: .delivered))
                return actions
            }
            state = .flushing(deadline: now.advanced(by: within))
            return [setDrainWatch(.shutdown), armFlushTimer()]
        case .flushing, .closing:
            return []
        case .closed:
            return [.finishShutdown(.linkDown)]
        }
    }

    /// The transport finished closing for the shutdown: closing → closed.
    public mutating func closed() -> [Action] {
        guard case .closing(let result) = state else { return [] }
        var actions = endFlushes(.linkDown)
        state = .closed
        actions += [.report(.closed), .finishShutdown(result)]
        return actions
    }

    // MARK: helpers

    private var isFlushingForShutdown: Bool {
        if case .flushing = state { return true }
        return false
    }

    private mutating func beginAttempt(at now: Instant) -> [Action] {
        attempt += 1
        statistics.connectAttempts += 1
        state = .connecting(attempt: attempt)
        return [.report(.connecting), .arm(.connect, at: now.advanced(by: connectTimeout)), .open(attempt: attempt)]
    }

    /// Every flush waiter gets `result`; the flush timer and the drain reports stop.
    private mutating func endFlushes(_ result: FlushResult) -> [Action] {
        var actions: [Action] = []
        if !flushes.isEmpty {
            actions.append(.finishFlushes(flushes.map(\.id), result))
            flushes.removeAll()
        }
        if drainWatch != .off || isFlushingForShutdown {
            actions.append(.cancel(.flush))
            actions.append(setDrainWatch(.off))
        }
        return actions
    }

    private mutating func setDrainWatch(_ watch: DrainWatch) -> Action {
        drainWatch = watch
        return .watchDrain(watch)
    }

    /// Arms the flush timer for the earliest deadline (a waiter's or the shutdown window's).
    private func armFlushTimer() -> Action {
        var earliest = flushes.map(\.deadline).min()
        if case .flushing(let deadline) = state { earliest = min(earliest ?? deadline, deadline) }
        return .arm(.flush, at: earliest ?? .zero)
    }
}
