import DriveCore
import DriveSystem
import Glibc

/// A link over a byte stream (TCP, RFCOMM, a serial tty, a socketpair), driven by the event loop.
///
/// Connects without blocking (with a timeout), reads car lines, writes the `FrameQueue` one frame
/// at a time and never blocks. Frames sent while not up are dropped. Where it stands, and the fd
/// and timers each state owns, is one `StreamLinkLifecycle` value.
///
/// **Kernel queue rule** (protocol §5.6): a motion frame is handed to the kernel only while its
/// output queue (`SIOCOUTQ`/`TIOCOUTQ`) holds fewer than `options.maxInFlight` frames; otherwise it
/// waits in the `FrameQueue`'s coalescing slot (newest wins) and the queue is looked at again every
/// `heldRecheckInterval` (1 ms) while it waits. `E` and F frames always go, in order. **Stall** (§6): a kernel queue that
/// does not shrink for `options.stallTimeout` means the link is down. Both rules are worked out by
/// `KernelQueueAccounting` from at most one reading of the queue per send or recheck (on RFCOMM a
/// reading is an ioctl and a getsockopt); a send reads only when the accounting's upper bound is at
/// the limit. On any loss (EOF, EPIPE, ECONNRESET, EIO, a stall, a failed connect)
/// the fd is closed abortively (`prepareAbort`: RST for sockets, `tcflush` for ttys) so nothing
/// queued is delivered later, the state goes `.down(reason)` and a reconnect follows after a
/// back-off (0.5 s doubling, at most 5 s). No timer runs while the link is idle.
public final class StreamLink<Connector: StreamConnector>: CarLink {
    /// The kind of stream and its address.
    public let connector: Connector
    /// A short name for logs.
    public var name: String { connector.name }
    /// The current state; `.down("not started")` before `start()`.
    public var state: LinkState { lifecycle.linkState }
    /// Called on every state change.
    public var onStateChange: ((LinkState) -> Void)?
    /// Called for every line the car sends.
    public var onLine: ((CarLine) -> Void)?
    /// Connect timeout, motion frames allowed in the kernel, stall timeout.
    public var options: LinkOptions {
        didSet {
            accounting.maxInFlight = options.maxInFlight
            accounting.stallTimeout = options.stallTimeout
        }
    }
    /// How long a connect may take.
    public var connectTimeout: Duration {
        get { options.connectTimeout }
        set { options.connectTimeout = newValue }
    }
    /// How often a shutdown or a flush waiter checks whether the flush is complete.
    public var flushPollInterval: Duration = .milliseconds(10) {
        didSet { accounting.flushRecheckInterval = flushPollInterval }
    }
    /// How often the kernel's output queue is looked at while a motion frame is held for it: the
    /// held frame leaves at most this long after the queue has room (on RFCOMM each look is an
    /// ioctl and a getsockopt, so the short rechecks run only while a frame is held).
    public var heldRecheckInterval: Duration = .milliseconds(1) {
        didSet { accounting.heldRecheckInterval = heldRecheckInterval }
    }
    /// How often the kernel's output queue is looked at while it is not empty (stall detection).
    public var queueRecheckInterval: Duration = .milliseconds(50) {
        didSet { accounting.queueRecheckInterval = queueRecheckInterval }
    }
    /// The reconnect delays.
    public private(set) var backoff = Backoff()
    /// The delay of the most recently scheduled reconnect.
    public private(set) var lastRetryDelay: Duration?
    /// How many connects were started.
    public private(set) var connectAttempts = 0
    /// How many connects succeeded.
    public private(set) var connectionsMade = 0
    /// How many times the link was closed because its kernel queue stalled.
    public private(set) var stalls = 0
    /// Frames not yet handed to the kernel.
    public var pendingFrames: [Frame] { queue.pendingFrames }
    /// Frames handed to the kernel that it may still hold (exact for TCP and ttys, an upper bound otherwise).
    public var framesInKernel: Int { accounting.framesInKernel }
    /// What the kernel-queue rule did to the motion frames so far (all connections).
    public var holdStatistics: HoldStatistics? {
        var statistics = holds
        statistics.coalescedFrames = queue.coalescedFrames
        return statistics
    }

    private let loop: EventLoop
    /// Where the link stands, with the fd and the timers of that state.
    private var lifecycle: StreamLinkLifecycle = .idle
    /// Counts connect attempts, so a late answer from an attempt given up is ignored.
    private var connectGeneration = 0
    private var queue: FrameQueue
    /// The kernel queue of the current connection: frames in flight, the stall clock, the hold.
    private var accounting: KernelQueueAccounting
    private var assembler = LineAssembler()
    /// What the car sends is read into this (kept, so a read allocates nothing).
    private var readBuffer = [UInt8](repeating: 0, count: 4096)
    /// True while the connection's fd is watched for writable (a write would have blocked).
    private var watchingWritable = false
    /// The queue timer of the current connection and when it fires.
    private var queueTimer: EventLoop.TimerID?
    private var queueTimerDeadline: Instant?
    private var shutdownCallbacks: [(FlushResult) -> Void] = []
    private var flushWaiters: [(deadline: Instant, done: (FlushResult) -> Void)] = []
    /// The motion frames written, and how long the held ones waited.
    private var holds = HoldStatistics()
    /// When the waiting motion frame was queued, and whether the rule has held it.
    private var motionQueuedAt = Instant.zero
    private var motionHeld = false

    /// Creates a link; nothing happens until `start()`.
    public init(
        connector: Connector, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(),
        options: LinkOptions = LinkOptions()
    ) {
        self.connector = connector
        self.loop = loop
        self.queue = FrameQueue(encoder: encoder)
        self.options = options
        self.accounting = KernelQueueAccounting(
            at: .zero, readingsArePayload: connector.queuedBytesArePayload, maxInFlight: options.maxInFlight,
            stallTimeout: options.stallTimeout)
        queueTimerFired = { [weak self] in self?.queueTimerDue() }
    }

    deinit {
        if let timer = queueTimer { loop.cancel(timer) }
        switch lifecycle {
        case .connecting(_, let fd, let timeout):
            if let timeout { loop.cancel(timeout) }
            if let fd { close(fd, abort: true) }  // a tty with queued output would wait out closing_wait
        case .up(let fd):
            close(fd, abort: true)
        case .flushing(let fd, _, let poll):
            if let poll { loop.cancel(poll) }
            close(fd, abort: true)
        case .backingOff(_, let retry):
            loop.cancel(retry)
        case .idle, .closed:
            break
        }
    }

    /// Starts connecting.
    public func start() {
        guard case .idle = lifecycle else { return }
        connect()
    }

    /// Queues `frame` and writes what the fd and the in-flight limit take now; dropped unless the link is up.
    public func send(_ frame: Frame) {
        guard let fd = lifecycle.connectionFD else { return }
        if frame.isMotion { motionQueuedAt = loop.now() }
        queue.push(frame)
        writeOut(fd)
    }

    /// Calls `done` once everything queued has left carbridge and the kernel's queue drained,
    /// or with `.timedOut` after `within` (the link stays up either way).
    public func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        guard lifecycle.connectionFD != nil else {
            loop.execute { done(.linkDown) }
            return
        }
        flushWaiters.append((loop.now().advanced(by: within), done))
        checkQueue()
    }

    /// Stops reconnecting, flushes queued bytes until `flushWithin` passes, closes, then calls `done`.
    public func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        switch lifecycle {
        case .closed:
            loop.execute { done(.linkDown) }
        case .flushing:
            shutdownCallbacks.append(done)
        case .up(let fd):
            shutdownCallbacks.append(done)
            transition(to: .flushing(fd: fd, deadline: loop.now().advanced(by: flushWithin), poll: nil))
            pollFlush()
        case .idle, .connecting, .backingOff:
            shutdownCallbacks.append(done)
            finishShutdown(.linkDown)
        }
    }

    // MARK: the lifecycle

    /// Accounting for a connection with an empty queue, from now on.
    private func newAccounting() -> KernelQueueAccounting {
        KernelQueueAccounting(
            at: loop.now(), readingsArePayload: connector.queuedBytesArePayload, maxInFlight: options.maxInFlight,
            stallTimeout: options.stallTimeout, heldRecheckInterval: heldRecheckInterval,
            flushRecheckInterval: flushPollInterval, queueRecheckInterval: queueRecheckInterval)
    }

    /// The one place the lifecycle changes; tells `onStateChange` when the reported state changed.
    private func transition(to next: StreamLinkLifecycle) {
        let before = lifecycle.linkState
        lifecycle = next
        let after = next.linkState
        if after != before { onStateChange?(after) }
    }

    /// Releases what the current state owns (its fd, abortively unless `abort` is false, and its
    /// timers) and what the connection had (queued frames, the queue timer, flush waiters).
    /// The caller then moves to the next state.
    private func release(abort: Bool = true) {
        switch lifecycle {
        case .connecting(_, let fd, let timeout):
            if let timeout { loop.cancel(timeout) }
            if let fd { close(fd, abort: abort) }
        case .up(let fd):
            close(fd, abort: abort)
        case .flushing(let fd, _, let poll):
            if let poll { loop.cancel(poll) }
            close(fd, abort: abort)
        case .backingOff(_, let retry):
            loop.cancel(retry)
        case .idle, .closed:
            break
        }
        cancelQueueTimer()
        watchingWritable = false
        queue.clear()
        motionHeld = false
        accounting = newAccounting()
        let waiters = flushWaiters
        flushWaiters.removeAll()
        for waiter in waiters { loop.execute { waiter.done(.linkDown) } }
    }

    private func close(_ fd: Int32, abort: Bool) {
        loop.unwatch(fd)
        if abort { connector.prepareAbort(fd) }
        Syscall.close(fd)
    }

    // MARK: connecting

    /// idle / backingOff → connecting.
    private func connect() {
        connectAttempts += 1
        connectGeneration += 1
        let generation = connectGeneration
        transition(to: .connecting(generation: generation, fd: nil, timeout: nil))
        guard isConnecting(generation) else { return }  // the state callback may have shut the link down
        // A slow first step (name resolution) runs off the loop; the connect timeout covers it.
        let preparing = connector.prepare(on: loop) { [weak self] failure in
            guard let self, self.isConnecting(generation, withFD: false) else { return }  // that attempt was given up
            if let failure {
                self.lose(failure.sentence)
            } else {
                self.openConnection(generation)
            }
        }
        guard isConnecting(generation, withFD: false) else { return }  // `done` may have come at once
        if preparing {
            transition(to: .connecting(generation: generation, fd: nil, timeout: startConnectTimer(generation)))
        } else {
            openConnection(generation)
        }
    }

    /// True while attempt `generation` is under way (and, when `withFD` is given, has or has no fd).
    private func isConnecting(_ generation: Int, withFD: Bool? = nil) -> Bool {
        guard case .connecting(let current, let fd, _) = lifecycle, current == generation else { return false }
        return withFD.map { $0 == (fd != nil) } ?? true
    }

    private func openConnection(_ generation: Int) {
        guard case .connecting(_, nil, let timeout) = lifecycle else { return }
        let fd: Int32
        let progress: ConnectProgress
        do {
            (fd, progress) = try connector.open()
        } catch {
            lose(Self.sentence(for: error))
            return
        }
        switch progress {
        case .connected:
            transition(to: .connecting(generation: generation, fd: fd, timeout: timeout))
            becomeUp(fd)
        case .inProgress:
            transition(to: .connecting(generation: generation, fd: fd, timeout: timeout ?? startConnectTimer(generation)))
            do {
                try loop.watch(fd, for: .writable) { [weak self] _ in self?.connectFinished(generation) }
            } catch {
                lose(Self.sentence(for: error))
            }
        }
    }

    private func startConnectTimer(_ generation: Int) -> EventLoop.TimerID {
        loop.schedule(after: connectTimeout) { [weak self] in
            guard let self, case .connecting(generation, let fd, _) = self.lifecycle else { return }
            self.transition(to: .connecting(generation: generation, fd: fd, timeout: nil))  // fired: nothing to cancel
            self.lose(self.connector.connectTimeoutSentence(self.connectTimeout))
        }
    }

    /// The connecting socket became writable: connected, or the connect failed.
    private func connectFinished(_ generation: Int) {
        guard case .connecting(generation, let fd?, _) = lifecycle else { return }
        do {
            try connector.finishConnect(fd)
            becomeUp(fd)
        } catch {
            lose(Self.sentence(for: error))
        }
    }

    /// connecting → up.
    private func becomeUp(_ fd: Int32) {
        guard case .connecting(let generation, _, let timeout) = lifecycle else { return }
        if let timeout { loop.cancel(timeout) }
        transition(to: .connecting(generation: generation, fd: fd, timeout: nil))  // a failure below closes the fd
        do {
            try loop.watch(fd, for: .readable) { [weak self] events in self?.handle(events) }
        } catch {
            lose("cannot watch the connection to \(name): \(error)")
            return
        }
        watchingWritable = false
        backoff.reset()
        queue.clear()
        accounting = newAccounting()
        connector.tune(fd, options: options)
        assembler = LineAssembler()
        connectionsMade += 1
        transition(to: .up(fd: fd))
    }

    // MARK: I/O

    private func handle(_ events: IOEvents) {
        guard let fd = lifecycle.connectionFD else { return }
        if events.contains(.writable) { writeOut(fd) }
        guard lifecycle.connectionFD == fd else { return }
        if !events.intersection([.readable, .hangup, .error, .readHangup]).isEmpty {
            readAvailable(fd, hangup: events.contains(.hangup) || events.contains(.error))
        }
    }

    private func readAvailable(_ fd: Int32, hangup: Bool) {
        for _ in 0..<16 {
            let result: Int?
            do {
                result = try readBuffer.withUnsafeMutableBytes { try Syscall.read(fd, into: $0) }
            } catch let error as SystemError {
                deliverPartialLine()
                lose(connector.lossSentence(error))
                return
            } catch {
                lose("reading from \(name) failed: \(error)")
                return
            }
            guard let count = result else {
                if hangup { lose("\(name) hung up") }
                return
            }
            if count == 0 {
                deliverPartialLine()
                lose("the car closed the connection (\(name))")
                return
            }
            let lines = assembler.append(readBuffer[..<count])
            let time = loop.now()
            for line in lines {
                onLine?(CarLine(time: time, text: line))
                guard lifecycle.connectionFD == fd else { return }
            }
            if count < readBuffer.count { return }
        }
    }

    private func deliverPartialLine() {
        if let rest = assembler.finish() { onLine?(CarLine(time: loop.now(), text: rest)) }
    }

    /// The one reading of the kernel's output queue per send or recheck, fed to the accounting.
    private func observeKernelQueue(_ fd: Int32, at now: Instant) {
        accounting.observe(queued: connector.queuedBytes(fd) ?? 0, at: now, pendingInCarbridge: queue.hasPendingBytes)
    }

    /// After a send or a writable fd: write what may go, looking at the kernel queue first only when
    /// the accounting's bound is at `max_in_flight`.
    ///
    /// The bound (frames written since the last reading count as still in the kernel) can only
    /// overstate the kernel queue, so below the limit a reading could not hold a frame back and is
    /// skipped (it is an `ioctl`, two calls on RFCOMM). At the limit it is read
    /// whatever the frame (an `E` or F frame goes anyway, but the reading prunes the frames the kernel
    /// let go of, so the accounting stays that short). The stall clock does not need a reading per
    /// send either: the queue timer reads the queue while the kernel holds bytes.
    private func writeOut(_ fd: Int32) {
        let now = loop.now()
        if !accounting.mayHandOverMotionFrame { observeKernelQueue(fd, at: now) }
        guard writeFrames(fd, at: now), watchWritable(fd, accounting.isWriteBlocked && queue.hasPendingBytes) else { return }
        scheduleQueueCheck(at: now)
    }

    /// Hands frames to the kernel in order, one frame per write: `E` and F frames always, a motion
    /// frame only while the accounting allows one more in the kernel (protocol §5.6); otherwise it
    /// waits in the coalescing slot and the queue is looked at again shortly. False when the link was lost.
    private func writeFrames(_ fd: Int32, at now: Instant) -> Bool {
        while let head = queue.head {
            if head.isMotion, !queue.hasFrameInFlight, !accounting.mayHandOverMotionFrame {
                accounting.hold()
                motionHeld = true
                break
            }
            let written: Int?
            do {
                written = try queue.headBytes().withUnsafeBytes { try connector.write(fd, $0) }
            } catch let error as SystemError {
                lose(connector.lossSentence(error))
                return false
            } catch {
                lose("writing to \(name) failed: \(error)")
                return false
            }
            guard let count = written, count > 0 else {
                accounting.writeWouldBlock()
                break
            }
            let completed = queue.consume(count) > 0
            accounting.wrote(count, completingFrame: completed, at: now)
            if completed && head.isMotion {
                holds.wroteMotionFrame(waited: motionHeld ? now.nanoseconds &- motionQueuedAt.nanoseconds : nil)
                motionHeld = false
            }
        }
        return true
    }

    /// Looks at the kernel queue once: notes progress, declares a stall, writes what may go now,
    /// answers flush waiters, and keeps looking only while something is held or queued (no
    /// wake-ups when idle).
    private func checkQueue() {
        guard let fd = lifecycle.connectionFD else { return }
        let now = loop.now()
        observeKernelQueue(fd, at: now)
        // While shutting down the flush window decides, not the stall clock.
        if case .up = lifecycle, accounting.isStalled(at: now, pendingInCarbridge: queue.hasPendingBytes) {
            stalls += 1
            let seconds = SocketSupport.secondsText(options.stallTimeout)
            lose("the car has taken no data for \(seconds) s (link stalled on \(name)); closed so nothing queued arrives late")
            return
        }
        if queue.hasPendingBytes {
            guard writeFrames(fd, at: now), watchWritable(fd, accounting.isWriteBlocked && queue.hasPendingBytes)
            else { return }
        }
        answerFlushWaiters(at: now)
        scheduleQueueCheck(at: now)
    }

    private func answerFlushWaiters(at now: Instant) {
        guard !flushWaiters.isEmpty else { return }
        let drained = accounting.isDrained(pendingInCarbridge: queue.hasPendingBytes)
        var remaining: [(deadline: Instant, done: (FlushResult) -> Void)] = []
        var finished: [(done: (FlushResult) -> Void, result: FlushResult)] = []
        for waiter in flushWaiters {
            if drained {
                finished.append((waiter.done, .delivered))
            } else if now >= waiter.deadline {
                finished.append((waiter.done, .timedOut))
            } else {
                remaining.append(waiter)
            }
        }
        flushWaiters = remaining
        for item in finished { loop.execute { item.done(item.result) } }
    }

    /// Arms the queue timer when the accounting asks for a look (soon while a frame is held, less
    /// often while the kernel holds bytes); not at all when everything has drained.
    private func scheduleQueueCheck(at now: Instant) {
        let wanted = accounting.nextCheck(
            at: now, pendingInCarbridge: queue.hasPendingBytes, flushWaiting: !flushWaiters.isEmpty)
        if let current = queueTimerDeadline, let wanted, current <= wanted, queueTimer != nil { return }
        cancelQueueTimer()
        guard let wanted else { return }
        queueTimerDeadline = wanted
        queueTimer = loop.schedule(at: wanted, queueTimerFired)
    }

    /// The queue timer's body, made once in `init`, so that scheduling it after a write allocates no closure.
    private var queueTimerFired: () -> Void = {}

    private func queueTimerDue() {
        queueTimer = nil
        queueTimerDeadline = nil
        checkQueue()
    }

    private func cancelQueueTimer() {
        if let timer = queueTimer { loop.cancel(timer) }
        queueTimer = nil
        queueTimerDeadline = nil
    }

    /// Watches the fd for writable too while a write would have blocked; false when the link was lost.
    private func watchWritable(_ fd: Int32, _ on: Bool) -> Bool {
        guard on != watchingWritable else { return true }
        do {
            try loop.change(fd, to: on ? [.readable, .writable] : .readable)
            watchingWritable = on
            return true
        } catch {
            lose("cannot watch the connection to \(name): \(error)")
            return false
        }
    }

    // MARK: loss and shutdown

    /// The link is lost: close it abortively (nothing queued may reach the car later), then
    /// back off and reconnect — or, while flushing for a shutdown, close for good.
    private func lose(_ reason: String) {
        let wasFlushing: Bool
        switch lifecycle {
        case .connecting, .up: wasFlushing = false
        case .flushing: wasFlushing = true
        case .idle, .backingOff, .closed: return  // nothing open to lose
        }
        release()
        if wasFlushing {
            close(with: .linkDown)
            return
        }
        let delay = backoff.next()
        lastRetryDelay = delay
        let retry = loop.schedule(after: delay) { [weak self] in self?.retryTimerFired() }
        transition(to: .backingOff(reason: reason, retry: retry))
    }

    private func retryTimerFired() {
        guard case .backingOff = lifecycle else { return }
        connect()
    }

    /// flushing: one look at the kernel queue; writes what may go, then closes once everything
    /// drained or the window is over, else looks again after `flushPollInterval`.
    private func pollFlush() {
        guard case .flushing(let fd, let deadline, _) = lifecycle else { return }
        let now = loop.now()
        observeKernelQueue(fd, at: now)
        if queue.hasPendingBytes {
            guard writeFrames(fd, at: now), watchWritable(fd, accounting.isWriteBlocked && queue.hasPendingBytes)
            else { return }
        }
        if accounting.isDrained(pendingInCarbridge: queue.hasPendingBytes) {
            finishShutdown(.delivered)
            return
        }
        if now >= deadline {
            finishShutdown(.timedOut)
            return
        }
        scheduleQueueCheck(at: now)
        let poll = loop.schedule(after: flushPollInterval) { [weak self] in self?.pollTimerFired() }
        transition(to: .flushing(fd: fd, deadline: deadline, poll: poll))
    }

    private func pollTimerFired() {
        guard case .flushing(let fd, let deadline, _) = lifecycle else { return }
        transition(to: .flushing(fd: fd, deadline: deadline, poll: nil))  // fired: nothing to cancel
        pollFlush()
    }

    /// Ends a shutdown with `result`: a flushing connection is closed (gracefully when delivered,
    /// abortively when the window ran out); any other state releases what it holds.
    private func finishShutdown(_ result: FlushResult) {
        if case .flushing(let fd, _, _) = lifecycle {
            // Read what the car sent last, so closing a socket with unread data does not reset it.
            readRemainingLines(fd)
            // Frames the flush window could not deliver must not arrive later.
            if result != .timedOut { connector.prepareClose(fd) }
            release(abort: result == .timedOut)
        } else {
            release(abort: false)
        }
        close(with: result)
    }

    /// → closed; calls the shutdown callbacks with `result`.
    private func close(with result: FlushResult) {
        transition(to: .closed)
        let callbacks = shutdownCallbacks
        shutdownCallbacks.removeAll()
        for callback in callbacks { loop.execute { callback(result) } }
    }

    private func readRemainingLines(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { (try? Syscall.read(fd, into: $0)) ?? nil } ?? 0
            if count <= 0 { break }
            let time = loop.now()
            for line in assembler.append(buffer[..<count]) { onLine?(CarLine(time: time, text: line)) }
        }
    }

    static func sentence(for error: any Error) -> String {
        if let failure = error as? LinkFailure { return failure.sentence }
        if let system = error as? SystemError { return "\(system.call) failed: \(SocketSupport.reason(system.errno))" }
        return "\(error)"
    }
}
