import DriveCore
import DriveSystem
import Glibc

/// A byte stream to the car (TCP, RFCOMM, a serial tty, a socketpair) as a `LinkTransport`: connects
/// without blocking, reads car lines, writes the `FrameQueue` one frame at a time and never blocks.
///
/// **Kernel queue rule** (protocol §5.6): a motion frame is handed to the kernel only while its
/// output queue (`SIOCOUTQ`/`TIOCOUTQ`) holds fewer than `options.maxInFlight` frames; otherwise it
/// waits in the `FrameQueue`'s coalescing slot (newest wins) and the queue is looked at again every
/// `heldRecheckInterval` (1 ms) while it waits. `E` and F frames always go, in order. **Stall** (§6): a
/// kernel queue that does not shrink for `options.stallTimeout` is a loss (except while a shutdown
/// flushes: its window decides). Both rules are worked out by `KernelQueueAccounting` from at most one
/// reading of the queue per send or recheck (on RFCOMM a reading is an ioctl and a getsockopt); a send
/// reads only when the accounting's upper bound is at the limit. On any loss (EOF, EPIPE, ECONNRESET,
/// EIO, a stall, a failed connect) the fd is closed abortively (`prepareAbort`: RST for sockets,
/// `tcflush` for ttys) so nothing queued is delivered later, then the loss is reported. No timer runs
/// while the link is idle.
public final class StreamTransport<Connector: StreamConnector>: LinkTransport {
    /// The kind of stream and its address.
    public let connector: Connector
    /// A short name for logs.
    public var name: String { connector.name }
    /// Where the transport reports.
    public var onEvent: ((TransportEvent) -> Void)?
    /// Motion frames allowed in the kernel, stall timeout (the connect timeout is the supervisor's).
    public var options: LinkOptions {
        didSet {
            accounting.maxInFlight = options.maxInFlight
            accounting.stallTimeout = options.stallTimeout
        }
    }
    /// How often the queue is looked at while a flush or a shutdown waits for it to drain.
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
    /// The attempt or connection, with its fd.
    private var connection: StreamConnection = .none
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
    private var drainWatch = LinkSupervisor.DrainWatch.off
    /// The motion frames written, and how long the held ones waited.
    private var holds = HoldStatistics()
    /// When the waiting motion frame was queued, and whether the rule has held it.
    private var motionQueuedAt = Instant.zero
    private var motionHeld = false

    /// A transport over `connector`; nothing happens until `open(attempt:)`.
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
        if let fd = connection.fd { close(fd, abort: true) }  // a tty with queued output would wait out closing_wait
    }

    // MARK: LinkTransport

    /// Starts attempt `attempt`: the connector prepares (name resolution, off the loop), then connects.
    public func open(attempt: Int) {
        release()
        connection = .preparing(attempt: attempt)
        let preparing = connector.prepare(on: loop) { [weak self] failure in
            guard let self, case .preparing(attempt) = self.connection else { return }  // that attempt was given up
            if let failure {
                self.lose(failure.sentence)
            } else {
                self.openConnection(attempt)
            }
        }
        if !preparing, case .preparing(attempt) = connection { openConnection(attempt) }
    }

    /// Closes the attempt under way; the connector says why in its words.
    public func abandonAttempt(after timeout: Duration) -> String {
        release()
        return connector.connectTimeoutSentence(timeout)
    }

    /// Queues `frame` and writes what the fd and the in-flight limit take now.
    public func send(_ frame: Frame) {
        guard case .connected(let fd) = connection else { return }
        if frame.isMotion { motionQueuedAt = loop.now() }
        queue.push(frame)
        writeOut(fd)
    }

    /// One look at the kernel queue: true when nothing waits in carbridge or in the kernel.
    public func isDrained() -> Bool {
        guard case .connected(let fd) = connection else { return true }
        observeKernelQueue(fd, at: loop.now())
        return accounting.isDrained(pendingInCarbridge: queue.hasPendingBytes)
    }

    /// While a drain is watched, the queue is looked at every `flushPollInterval` and each look reported.
    public func watchDrain(_ watch: LinkSupervisor.DrainWatch) {
        drainWatch = watch
        guard watch != .off, connection.fd != nil else { return }
        scheduleQueueCheck(at: loop.now())
    }

    /// Reads what the car sent last (so closing a socket with unread data does not reset it), then
    /// closes: gracefully when everything was delivered, abortively otherwise (frames the window could
    /// not deliver must not arrive later).
    public func close(result: FlushResult, then done: @escaping () -> Void) {
        if case .connected(let fd) = connection {
            readRemainingLines(fd)
            if result == .delivered { connector.prepareClose(fd) }
        }
        release(abort: result != .delivered)
        done()
    }

    // MARK: connecting

    private func openConnection(_ attempt: Int) {
        let fd: Int32
        let progress: ConnectProgress
        do {
            (fd, progress) = try connector.open()
        } catch {
            lose(Self.sentence(for: error))
            return
        }
        connection = .connecting(attempt: attempt, fd: fd)
        switch progress {
        case .connected:
            becomeConnected(fd, attempt: attempt)
        case .inProgress:
            do {
                try loop.watch(fd, for: .writable) { [weak self] _ in self?.connectFinished(attempt) }
            } catch {
                lose(Self.sentence(for: error))
            }
        }
    }

    /// The connecting socket became writable: connected, or the connect failed.
    private func connectFinished(_ attempt: Int) {
        guard case .connecting(attempt, let fd) = connection else { return }
        do {
            try connector.finishConnect(fd)
            becomeConnected(fd, attempt: attempt)
        } catch {
            lose(Self.sentence(for: error))
        }
    }

    private func becomeConnected(_ fd: Int32, attempt: Int) {
        do {
            try loop.watch(fd, for: .readable) { [weak self] events in self?.handle(events) }
        } catch {
            lose("cannot watch the connection to \(name): \(error)")
            return
        }
        watchingWritable = false
        queue.clear()
        accounting = newAccounting()
        connector.tune(fd, options: options)
        assembler = LineAssembler()
        connection = .connected(fd: fd)
        onEvent?(.opened(attempt: attempt))
    }

    /// Accounting for a connection with an empty queue, from now on.
    private func newAccounting() -> KernelQueueAccounting {
        KernelQueueAccounting(
            at: loop.now(), readingsArePayload: connector.queuedBytesArePayload, maxInFlight: options.maxInFlight,
            stallTimeout: options.stallTimeout, heldRecheckInterval: heldRecheckInterval,
            flushRecheckInterval: flushPollInterval, queueRecheckInterval: queueRecheckInterval)
    }

    // MARK: I/O

    private func handle(_ events: IOEvents) {
        guard case .connected(let fd) = connection else { return }
        if events.contains(.writable) { writeOut(fd) }
        guard connection.fd == fd else { return }
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
                onEvent?(.line(CarLine(time: time, text: line)))
                guard connection.fd == fd else { return }
            }
            if count < readBuffer.count { return }
        }
    }

    private func deliverPartialLine() {
        if let rest = assembler.finish() { onEvent?(.line(CarLine(time: loop.now(), text: rest))) }
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
    /// reports the drain when one is watched, and keeps looking only while something is held, queued or
    /// awaited (no wake-ups when idle).
    private func checkQueue() {
        guard case .connected(let fd) = connection else { return }
        let now = loop.now()
        observeKernelQueue(fd, at: now)
        // While a shutdown flushes, its window decides, not the stall clock.
        if drainWatch != .shutdown, accounting.isStalled(at: now, pendingInCarbridge: queue.hasPendingBytes) {
            let seconds = SocketSupport.secondsText(options.stallTimeout)
            lose("the car has taken no data for \(seconds) s (link stalled on \(name)); closed so nothing queued arrives late",
                 stalled: true)
            return
        }
        if queue.hasPendingBytes {
            guard writeFrames(fd, at: now), watchWritable(fd, accounting.isWriteBlocked && queue.hasPendingBytes)
            else { return }
        }
        scheduleQueueCheck(at: now)
        if drainWatch != .off {
            onEvent?(.progressed(drained: accounting.isDrained(pendingInCarbridge: queue.hasPendingBytes)))
        }
    }

    /// Arms the queue timer when the accounting asks for a look (soon while a frame is held, less
    /// often while the kernel holds bytes or a drain is awaited); not at all when everything has drained.
    private func scheduleQueueCheck(at now: Instant) {
        let wanted = accounting.nextCheck(
            at: now, pendingInCarbridge: queue.hasPendingBytes, flushWaiting: drainWatch != .off)
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

    // MARK: loss and closing

    /// The attempt failed or the connection is lost: close it abortively (nothing queued may reach the
    /// car later), then report.
    private func lose(_ reason: String, stalled: Bool = false) {
        guard connection.isOpen else { return }
        release()
        onEvent?(.failed(reason, stalled: stalled))
    }

    /// Closes the fd (abortively unless `abort` is false) and forgets what the connection had (queued
    /// frames, the queue timer, the drain watch).
    private func release(abort: Bool = true) {
        if let fd = connection.fd { close(fd, abort: abort) }
        connection = .none
        cancelQueueTimer()
        watchingWritable = false
        queue.clear()
        motionHeld = false
        drainWatch = .off
        accounting = newAccounting()
    }

    private func close(_ fd: Int32, abort: Bool) {
        loop.unwatch(fd)
        if abort { connector.prepareAbort(fd) }
        Syscall.close(fd)
    }

    private func readRemainingLines(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { (try? Syscall.read(fd, into: $0)) ?? nil } ?? 0
            if count <= 0 { break }
            let time = loop.now()
            for line in assembler.append(buffer[..<count]) { onEvent?(.line(CarLine(time: time, text: line))) }
        }
    }

    static func sentence(for error: any Error) -> String {
        if let failure = error as? LinkFailure { return failure.sentence }
        if let system = error as? SystemError { return "\(system.call) failed: \(SocketSupport.reason(system.errno))" }
        return "\(error)"
    }
}

/// Where a `StreamTransport`'s attempt or connection stands, with its fd where it has one.
enum StreamConnection {
    /// No attempt, no connection.
    case none
    /// The connector prepares attempt `attempt` (name resolution); no fd yet.
    case preparing(attempt: Int)
    /// The socket of attempt `attempt` connects (watched for writable).
    case connecting(attempt: Int, fd: Int32)
    /// Connected: frames go out on `fd`, car lines come in.
    case connected(fd: Int32)

    /// The fd, in the states that have one.
    var fd: Int32? {
        switch self {
        case .connecting(_, let fd), .connected(let fd): return fd
        case .none, .preparing: return nil
        }
    }

    /// An attempt is under way or a connection is up.
    var isOpen: Bool {
        if case .none = self { return false }
        return true
    }
}
