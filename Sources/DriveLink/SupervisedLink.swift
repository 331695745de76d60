import DriveCore
import DriveSystem

/// A car link: a `LinkTransport` under the `LinkSupervisor`, on one event loop. The thin I/O shell of
/// the pure state machine: it feeds the supervisor every event (the API's calls, the transport's reports,
/// the timers) and performs the actions it returns, one event at a time.
///
/// An event that arrives while another is being handled (a transport that fails inside `open`, an
/// `onStateChange` that shuts the link down) waits until that one's actions are all performed, so the
/// actions of one event are never interleaved with another's. Flush and shutdown waiters are always
/// called from the loop (`execute`), never from inside the call that completed them.
public final class SupervisedLink<Transport: LinkTransport>: CarLink {
    /// How the link reaches the car.
    public let transport: Transport
    /// A short name for logs.
    public var name: String { transport.name }
    /// The current state; `.down("not started")` before `start()`.
    public private(set) var state: LinkState = .down(reason: "not started")
    /// Called on every state change.
    public var onStateChange: ((LinkState) -> Void)?
    /// Called for every line the car sends.
    public var onLine: ((CarLine) -> Void)?
    /// Called with what the transport found out that the driver should know.
    public var onNotice: ((String) -> Void)?
    /// How long a connect may take.
    public var connectTimeout: Duration {
        get { supervisor.connectTimeout }
        set { supervisor.connectTimeout = newValue }
    }
    /// What the lifecycle did so far (attempts, connections, stalls, the last back-off).
    public var statistics: LinkSupervisor.Statistics? { supervisor.statistics }
    /// How many connects were started.
    public var connectAttempts: Int { supervisor.statistics.connectAttempts }
    /// How many connects succeeded.
    public var connectionsMade: Int { supervisor.statistics.connectionsMade }
    /// How many times the link was closed because the car took nothing for the stall timeout.
    public var stalls: Int { supervisor.statistics.stalls }
    /// The delay of the most recently scheduled reconnect.
    public var lastRetryDelay: Duration? { supervisor.statistics.lastRetryDelay }
    /// What the kernel-queue rule did to the motion frames so far.
    public var holdStatistics: HoldStatistics? { transport.holdStatistics }

    private enum Input {
        case start
        case transport(TransportEvent)
        case timer(LinkSupervisor.Timer)
        case flush(id: Int, within: Duration)
        case shutdown(within: Duration)
        case closed
    }

    private let loop: EventLoop
    private var supervisor: LinkSupervisor
    private var timers: [LinkSupervisor.Timer: EventLoop.TimerID] = [:]
    private var flushWaiters: [Int: (FlushResult) -> Void] = [:]
    private var nextFlushID = 0
    private var shutdownWaiters: [(FlushResult) -> Void] = []
    /// Events that came while another was handled.
    private var pending: [Input] = []
    private var handling = false

    /// A link over `transport`; nothing happens until `start()`.
    public init(transport: Transport, loop: EventLoop, connectTimeout: Duration) {
        self.transport = transport
        self.loop = loop
        self.supervisor = LinkSupervisor(connectTimeout: connectTimeout)
        pending.reserveCapacity(4)
        // The transport is this link's own part: the callback goes with it, and `deinit` takes it back.
        transport.onEvent = { [unowned self] event in self.transportEvent(event) }
    }

    deinit {
        transport.onEvent = nil
        for timer in timers.values { loop.cancel(timer) }
    }

    /// Starts connecting (and reconnecting after losses).
    public func start() { handle(.start) }

    /// Hands `frame` to the transport, which drops it unless its connection is up. The transport's own
    /// state is the guard: it is connected exactly while the supervisor is up or flushing (it reports a loss
    /// only once closed, and is closed in the same event that ends a shutdown), and a send reads no
    /// state of this shell.
    public func send(_ frame: Frame) {
        transport.send(frame)
    }

    /// Calls `done` once everything queued was delivered, or with `.timedOut` after `within` (the link
    /// stays up either way), or `.linkDown`.
    public func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        let id = nextFlushID
        nextFlushID += 1
        flushWaiters[id] = done
        handle(.flush(id: id, within: within))
    }

    /// Stops reconnecting, flushes what is queued for at most `flushWithin`, closes, then calls `done`.
    public func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        shutdownWaiters.append(done)
        handle(.shutdown(within: flushWithin))
    }

    // MARK: the shell

    private func transportEvent(_ event: TransportEvent) {
        switch event {
        case .line(let line): onLine?(line)
        case .notice(let text): onNotice?(text)
        case .opened, .failed, .progressed: handle(.transport(event))
        }
    }

    private func handle(_ input: Input) {
        pending.append(input)
        guard !handling else { return }
        handling = true
        while !pending.isEmpty {
            let next = pending.removeFirst()
            perform(actions(for: next))
        }
        handling = false
    }

    private func actions(for input: Input) -> [LinkSupervisor.Action] {
        let now = loop.now()
        switch input {
        case .start:
            return supervisor.start(at: now)
        case .transport(.opened(let attempt)):
            return supervisor.opened(attempt: attempt)
        case .transport(.failed(let reason, let stalled)):
            return supervisor.failed(reason, stalled: stalled, at: now)
        case .transport(.progressed(let drained)):
            return supervisor.progressed(drained: drained)
        case .transport(.line), .transport(.notice):
            return []
        case .timer(.connect):
            return supervisor.connectTimedOut()
        case .timer(.retry):
            return supervisor.retryDue(at: now)
        case .timer(.flush):
            return supervisor.flushTimerFired(at: now)
        case .flush(let id, let within):
            let drained = supervisor.state.isConnected && transport.isDrained()
            return supervisor.flush(id: id, within: within, drained: drained, at: now)
        case .shutdown(let within):
            let drained = supervisor.state.isConnected && transport.isDrained()
            return supervisor.shutdown(within: within, drained: drained, at: now)
        case .closed:
            return supervisor.closed()
        }
    }

    private func perform(_ actions: [LinkSupervisor.Action]) {
        for action in actions {
            switch action {
            case .report(let next):
                guard next != state else { continue }
                state = next
                onStateChange?(next)
            case .open(let attempt):
                transport.open(attempt: attempt)
            case .abandonAttempt:
                let reason = transport.abandonAttempt(after: supervisor.connectTimeout)
                handle(.transport(.failed(reason, stalled: false)))
            case .close(let result):
                transport.close(result: result) { [weak self] in self?.handle(.closed) }
            case .arm(let timer, let deadline):
                if let armed = timers.removeValue(forKey: timer) { loop.cancel(armed) }
                timers[timer] = loop.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.timers[timer] = nil
                    self.handle(.timer(timer))
                }
            case .cancel(let timer):
                if let armed = timers.removeValue(forKey: timer) { loop.cancel(armed) }
            case .watchDrain(let watch):
                transport.watchDrain(watch)
            case .finishFlushes(let ids, let result):
                for id in ids {
                    guard let done = flushWaiters.removeValue(forKey: id) else { continue }
                    loop.execute { done(result) }
                }
            case .finishShutdown(let result):
                let waiters = shutdownWaiters
                shutdownWaiters.removeAll()
                for done in waiters { loop.execute { done(result) } }
            }
        }
    }
}
