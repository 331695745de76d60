import DriveCore
import DriveSystem
import Glibc

/// A link over a byte stream (TCP, RFCOMM, a serial tty, a socketpair), driven by the event loop.
///
/// Connects without blocking (with a timeout), reads car lines, writes the `FrameQueue` one frame
/// at a time and never blocks. Frames sent while not up are dropped.
///
/// **Kernel queue rule** (protocol §5.6): a motion frame is handed to the kernel only while its
/// output queue (`SIOCOUTQ`/`TIOCOUTQ`) holds fewer than `options.maxInFlight` frames; otherwise it
/// waits in the `FrameQueue`'s coalescing slot (newest wins) and the queue is looked at again every
/// `heldRecheckInterval`. `E` and F frames always go, in order. **Stall** (§6): a kernel queue that
/// does not shrink for `options.stallTimeout` means the link is down. On any loss (EOF, EPIPE,
/// ECONNRESET, EIO, a stall, a failed connect) the fd is closed abortively (`prepareAbort`: RST for
/// sockets, `tcflush` for ttys) so nothing queued is delivered later, the state goes `.down(reason)`
/// and a reconnect follows after a back-off (0.5 s doubling, at most 5 s). No timer runs while the
/// link is idle.
public final class StreamLink<Connector: StreamConnector>: CarLink {
    /// The kind of stream and its address.
    public let connector: Connector
    /// A short name for logs.
    public var name: String { connector.name }
    /// The current state; `.down("not started")` before `start()`.
    @exclusivity(unchecked) public private(set) var state: LinkState = .down(reason: "not started")
    /// Called on every state change.
    public var onStateChange: ((LinkState) -> Void)?
    /// Called for every line the car sends.
    public var onLine: ((CarLine) -> Void)?
    /// Connect timeout, motion frames allowed in the kernel, stall timeout.
    @exclusivity(unchecked) public var options: LinkOptions {
        didSet { stallTimeoutNanoseconds = options.stallTimeout.nanoseconds }
    }
    /// How long a connect may take.
    public var connectTimeout: Duration {
        get { options.connectTimeout }
        set { options.connectTimeout = newValue }
    }
    /// How often shutdown checks whether the flush is complete.
    public var flushPollInterval: Duration = .milliseconds(10)
    /// How often the kernel's output queue is looked at while a motion frame is held for it.
    public var heldRecheckInterval: Duration = .milliseconds(10) {
        didSet { heldRecheckNanoseconds = heldRecheckInterval.nanoseconds }
    }
    /// How often the kernel's output queue is looked at while it is not empty (stall detection).
    public var queueRecheckInterval: Duration = .milliseconds(50) {
        didSet { queueRecheckNanoseconds = queueRecheckInterval.nanoseconds }
    }
    // The intervals in nanoseconds, worked out when set (`Duration` → nanoseconds is 128-bit arithmetic,
    // too dear for every frame).
    private var heldRecheckNanoseconds: Int64 = 10_000_000
    private var queueRecheckNanoseconds: Int64 = 50_000_000
    private var stallTimeoutNanoseconds: Int64 = 0
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
    public var framesInKernel: Int { kernelFrameEnds.count }

    private let loop: EventLoop
    @exclusivity(unchecked) private var queue: FrameQueue
    @exclusivity(unchecked) private var assembler = LineAssembler()
    /// What the car sends is read into this (kept: a read allocates nothing of its own).
    @exclusivity(unchecked) private var readBuffer = [UInt8](repeating: 0, count: 4096)
    @exclusivity(unchecked) private var fd: Int32 = -1
    @exclusivity(unchecked) private var watchingWritable = false
    private var connectTimer: EventLoop.TimerID?
    /// Counts connect attempts, so a late answer from an attempt given up is ignored.
    private var connectGeneration = 0
    private var reconnectTimer: EventLoop.TimerID?
    @exclusivity(unchecked) private var queueTimer: EventLoop.TimerID?
    @exclusivity(unchecked) private var queueTimerDeadline: Instant?
    private var flushTimer: EventLoop.TimerID?
    private var started = false
    @exclusivity(unchecked) private var shuttingDown = false
    private var shutdownDeadline = Instant.zero
    private var shutdownCallbacks: [(FlushResult) -> Void] = []
    @exclusivity(unchecked) private var flushWaiters: [(deadline: Instant, done: (FlushResult) -> Void)] = []
    /// Bytes handed to the kernel on this connection.
    @exclusivity(unchecked) private var bytesWritten = 0
    /// `bytesWritten` at the end of each frame the kernel may still hold, oldest first.
    @exclusivity(unchecked) private var kernelFrameEnds: [Int] = []
    /// The kernel queue at the last look, and when it last shrank or was empty.
    @exclusivity(unchecked) private var lastQueuedBytes = 0
    @exclusivity(unchecked) private var lastDrain = Instant.zero
    /// True while a motion frame waits because `maxInFlight` frames are in the kernel.
    @exclusivity(unchecked) private var holding = false
    /// True after a write would have blocked, until bytes go out again.
    @exclusivity(unchecked) private var writeBlocked = false

    /// Creates a link; nothing happens until `start()`.
    public init(
        connector: Connector, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(),
        options: LinkOptions = LinkOptions()
    ) {
        self.connector = connector
        self.loop = loop
        self.queue = FrameQueue(encoder: encoder)
        self.options = options
        self.stallTimeoutNanoseconds = options.stallTimeout.nanoseconds
    }

    deinit {
        for timer in [connectTimer, reconnectTimer, queueTimer, flushTimer] {
            if let timer { loop.cancel(timer) }
        }
        if fd >= 0 {
            loop.unwatch(fd)
            connector.prepareAbort(fd)  // a tty with queued output would wait out closing_wait
            Syscall.close(fd)
        }
    }

    /// Starts connecting.
    public func start() {
        guard !started, !shuttingDown else { return }
        started = true
        connect()
    }

    /// Queues `frame` and writes what the fd and the in-flight limit take now; dropped unless the link is up.
    public func send(_ frame: Frame) {
        guard state == .up, fd >= 0 else { return }
        queue.push(frame)
        flush()
    }

    /// Calls `done` once everything queued has left carbridge and the kernel's queue drained,
    /// or with `.timedOut` after `within` (the link stays up either way).
    public func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        guard state == .up, fd >= 0 else {
            loop.execute { done(.linkDown) }
            return
        }
        flushWaiters.append((loop.now().advanced(by: within), done))
        flush()
        checkQueue()
    }

    /// Stops reconnecting, flushes queued bytes until `flushWithin` passes, closes, then calls `done`.
    public func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        if state == .closed {
            loop.execute { done(.linkDown) }
            return
        }
        shutdownCallbacks.append(done)
        guard !shuttingDown else { return }
        shuttingDown = true
        cancel(&reconnectTimer)
        guard state == .up, fd >= 0 else {
            finishShutdown(.linkDown)
            return
        }
        shutdownDeadline = loop.now().advanced(by: flushWithin)
        flush()
        if fd >= 0 { pollFlush() }
    }

    // MARK: connecting

    private func connect() {
        reconnectTimer = nil
        guard !shuttingDown else { return }
        connectAttempts += 1
        setState(.connecting)
        guard !shuttingDown else { return }  // the state callback may have shut the link down
        connectGeneration += 1
        let generation = connectGeneration
        // A slow first step (name resolution) runs off the loop; the connect timeout covers it.
        let preparing = connector.prepare(on: loop) { [weak self] failure in
            guard let self, self.connectGeneration == generation, self.state == .connecting,
                  self.fd < 0, !self.shuttingDown else { return }  // that attempt was given up
            if let failure {
                self.lose(failure.sentence)
            } else {
                self.openConnection()
            }
        }
        if preparing {
            startConnectTimer()
        } else {
            openConnection()
        }
    }

    private func openConnection() {
        do {
            let (newFD, progress) = try connector.open()
            fd = newFD
            switch progress {
            case .connected:
                becomeUp()
            case .inProgress:
                try loop.watch(newFD, for: .writable) { [weak self] events in self?.connectFinished(events) }
                if connectTimer == nil { startConnectTimer() }
            }
        } catch {
            lose(Self.sentence(for: error))
        }
    }

    private func startConnectTimer() {
        connectTimer = loop.schedule(after: connectTimeout) { [weak self] in
            guard let self else { return }
            self.connectTimer = nil
            self.lose(self.connector.connectTimeoutSentence(self.connectTimeout))
        }
    }

    private func connectFinished(_ events: IOEvents) {
        cancel(&connectTimer)
        do {
            try connector.finishConnect(fd)
            becomeUp()
        } catch {
            lose(Self.sentence(for: error))
        }
    }

    private func becomeUp() {
        cancel(&connectTimer)
        do {
            try loop.watch(fd, for: .readable) { [weak self] events in self?.handle(events) }
        } catch {
            lose("cannot watch the connection to \(name): \(error)")
            return
        }
        watchingWritable = false
        backoff.reset()
        queue.clear()
        resetKernelAccounting()
        connector.tune(fd, options: options)
        assembler = LineAssembler()
        connectionsMade += 1
        setState(.up)
    }

    // MARK: I/O

    private func handle(_ events: IOEvents) {
        let descriptor = fd
        if events.contains(.writable) { flush() }
        guard fd == descriptor, fd >= 0 else { return }
        if !events.intersection([.readable, .hangup, .error, .readHangup]).isEmpty {
            readAvailable(hangup: events.contains(.hangup) || events.contains(.error))
        }
    }

    private func readAvailable(hangup: Bool) {
        let descriptor = fd
        for _ in 0..<16 {
            let result: Int?
            do {
                result = try readBuffer.withUnsafeMutableBytes { try Syscall.read(descriptor, into: $0) }
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
                guard fd == descriptor else { return }
            }
            if count < readBuffer.count { return }
        }
    }

    private func deliverPartialLine() {
        if let rest = assembler.finish() { onLine?(CarLine(time: loop.now(), text: rest)) }
    }

    /// Hands frames to the kernel in order, one frame per write: `E` and F frames always, a motion
    /// frame only while fewer than `maxInFlight` frames are in the kernel (protocol §5.6); otherwise it
    /// waits in the coalescing slot and the queue is looked at again shortly.
    private func flush() {
        guard fd >= 0, state == .up else { return }
        holding = false
        observeQueue(at: loop.now())
        while let head = queue.head {
            if head.isMotion, !queue.hasFrameInFlight, countFramesInKernel() >= max(1, options.maxInFlight) {
                holding = true
                break
            }
            let written: Int?
            do {
                written = try queue.headBytes().withUnsafeBytes { try connector.write(fd, $0) }
            } catch let error as SystemError {
                lose(connector.lossSentence(error))
                return
            } catch {
                lose("writing to \(name) failed: \(error)")
                return
            }
            guard let count = written, count > 0 else {
                writeBlocked = true
                break
            }
            if writeBlocked {
                // Bytes that had to wait for the kernel went out: the queue is moving.
                writeBlocked = false
                lastDrain = loop.now()
            }
            if lastQueuedBytes == 0 { lastDrain = loop.now() }  // bytes start waiting now
            bytesWritten += count
            if queue.consume(count) > 0 { kernelFrameEnds.append(bytesWritten) }
            lastQueuedBytes = connector.queuedBytes(fd) ?? 0
        }
        setWatchWritable(writeBlocked && queue.hasPendingBytes)
        scheduleQueueCheck()
    }

    /// Frames the kernel may still hold, after dropping those it has let go of.
    private func countFramesInKernel() -> Int {
        guard fd >= 0, !kernelFrameEnds.isEmpty else { return 0 }
        let queued = connector.queuedBytes(fd) ?? 0
        if queued == 0 {
            kernelFrameEnds.removeAll(keepingCapacity: true)
        } else if connector.queuedBytesArePayload {
            let delivered = bytesWritten - queued
            let gone = kernelFrameEnds.prefix { $0 <= delivered }.count
            kernelFrameEnds.removeFirst(gone)
        }
        return kernelFrameEnds.count
    }

    /// Looks at the kernel queue: notes progress, declares a stall, writes what may go now, answers
    /// flush waiters, and keeps looking only while something is held or queued (no wake-ups when idle).
    private func checkQueue() {
        guard fd >= 0, state == .up else { return }
        let now = loop.now()
        observeQueue(at: now)
        _ = countFramesInKernel()
        let waiting = lastQueuedBytes > 0 || queue.hasPendingBytes
        // While shutting down the flush window decides, not the stall clock.
        if waiting, !shuttingDown, now.duration(since: lastDrain) >= options.stallTimeout {
            stalls += 1
            let seconds = SocketSupport.secondsText(options.stallTimeout)
            lose("the car has taken no data for \(seconds) s (link stalled on \(name)); closed so nothing queued arrives late")
            return
        }
        if queue.hasPendingBytes { flush() }
        guard fd >= 0 else { return }
        answerFlushWaiters(now: now)
        scheduleQueueCheck()
    }

    /// Measures the kernel queue; an empty queue (with nothing waiting in carbridge) or one that
    /// shrank since the last look is progress, which restarts the stall clock.
    private func observeQueue(at now: Instant) {
        let queued = connector.queuedBytes(fd) ?? 0
        // An empty kernel queue holds no frame (also keeps `kernelFrameEnds` short when only `E`/F frames,
        // which never ask `countFramesInKernel`, go out between two queue checks).
        if queued == 0 { kernelFrameEnds.removeAll(keepingCapacity: true) }
        if queued < lastQueuedBytes || (queued == 0 && !queue.hasPendingBytes) { lastDrain = now }
        lastQueuedBytes = queued
    }

    /// True when nothing waits in carbridge or in the kernel.
    private var fullyDrained: Bool {
        !queue.hasPendingBytes && (fd < 0 || (connector.queuedBytes(fd) ?? 0) == 0)
    }

    private func answerFlushWaiters(now: Instant) {
        guard !flushWaiters.isEmpty else { return }
        let drained = fullyDrained
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

    /// Arms the queue timer: soon while a frame is held, less often while the kernel holds bytes
    /// (stall detection, flush waiters); not at all when everything has drained.
    private func scheduleQueueCheck() {
        guard fd >= 0 else { return }
        let now = loop.now()
        let wanted: Instant?
        if holding || (queue.hasPendingBytes && !writeBlocked) {
            wanted = Instant(nanoseconds: now.nanoseconds &+ heldRecheckNanoseconds)
        } else if queue.hasPendingBytes || lastQueuedBytes > 0 || !flushWaiters.isEmpty {
            let stallAt = Instant(nanoseconds: lastDrain.nanoseconds &+ stallTimeoutNanoseconds)
            var next = min(Instant(nanoseconds: now.nanoseconds &+ queueRecheckNanoseconds), max(stallAt, now))
            if !flushWaiters.isEmpty { next = min(next, Instant(nanoseconds: now.nanoseconds &+ heldRecheckNanoseconds)) }
            wanted = next
        } else {
            wanted = nil
        }
        if let current = queueTimerDeadline, let wanted, current <= wanted, queueTimer != nil { return }
        cancel(&queueTimer)
        queueTimerDeadline = wanted
        guard let wanted else { return }
        queueTimer = loop.schedule(at: wanted, queueTimerFired)
    }

    /// The queue timer's body, made once (scheduling it after a write allocates no closure).
    private lazy var queueTimerFired: () -> Void = { [weak self] in
        guard let self else { return }
        self.queueTimer = nil
        self.queueTimerDeadline = nil
        self.checkQueue()
    }

    private func resetKernelAccounting() {
        bytesWritten = 0
        kernelFrameEnds.removeAll(keepingCapacity: true)
        lastQueuedBytes = 0
        lastDrain = loop.now()
        holding = false
        writeBlocked = false
    }

    private func setWatchWritable(_ on: Bool) {
        guard on != watchingWritable, fd >= 0 else { return }
        do {
            try loop.change(fd, to: on ? [.readable, .writable] : .readable)
            watchingWritable = on
        } catch {
            lose("cannot watch the connection to \(name): \(error)")
        }
    }

    // MARK: loss and shutdown

    /// The link is lost: close it abortively (nothing queued may reach the car later), then
    /// reconnect after the back-off — or finish a shutdown.
    private func lose(_ reason: String) {
        if fd >= 0 { connector.prepareAbort(fd) }
        closeFD()
        if shuttingDown {
            finishShutdown(.linkDown)
            return
        }
        let delay = backoff.next()
        lastRetryDelay = delay
        setState(.down(reason: reason))
        guard !shuttingDown, reconnectTimer == nil else { return }
        reconnectTimer = loop.schedule(after: delay) { [weak self] in self?.connect() }
    }

    private func pollFlush() {
        if fd < 0 {
            finishShutdown(.linkDown)
            return
        }
        if queue.hasPendingBytes { flush() }
        guard fd >= 0 else { return }
        if fullyDrained {
            finishShutdown(.delivered)
            return
        }
        if loop.now() >= shutdownDeadline {
            finishShutdown(.timedOut)
            return
        }
        flushTimer = loop.schedule(after: flushPollInterval) { [weak self] in
            self?.flushTimer = nil
            self?.pollFlush()
        }
    }

    private func finishShutdown(_ result: FlushResult) {
        if fd >= 0 {
            // Read what the car sent last, so closing a socket with unread data does not reset it.
            readRemainingLines()
            if fd >= 0 {
                // Frames the flush window could not deliver must not arrive later.
                if result == .timedOut { connector.prepareAbort(fd) } else { connector.prepareClose(fd) }
            }
        }
        closeFD()
        cancel(&reconnectTimer)
        setState(.closed)
        let callbacks = shutdownCallbacks
        shutdownCallbacks.removeAll()
        for callback in callbacks { loop.execute { callback(result) } }
    }

    private func readRemainingLines() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { (try? Syscall.read(fd, into: $0)) ?? nil } ?? 0
            if count <= 0 { break }
            let time = loop.now()
            for line in assembler.append(buffer[..<count]) { onLine?(CarLine(time: time, text: line)) }
        }
    }

    private func closeFD() {
        cancel(&connectTimer)
        cancel(&queueTimer)
        queueTimerDeadline = nil
        cancel(&flushTimer)
        if fd >= 0 {
            loop.unwatch(fd)
            Syscall.close(fd)
            fd = -1
        }
        watchingWritable = false
        queue.clear()
        resetKernelAccounting()
        let waiters = flushWaiters
        flushWaiters.removeAll()
        for waiter in waiters { loop.execute { waiter.done(.linkDown) } }
    }

    private func cancel(_ timer: inout EventLoop.TimerID?) {
        if let id = timer { loop.cancel(id) }
        timer = nil
    }

    private func setState(_ newState: LinkState) {
        guard newState != state else { return }
        state = newState
        onStateChange?(newState)
    }

    static func sentence(for error: any Error) -> String {
        if let failure = error as? LinkFailure { return failure.sentence }
        if let system = error as? SystemError { return "\(system.call) failed: \(SocketSupport.reason(system.errno))" }
        return "\(error)"
    }
}
