import DriveCore
import DriveSystem
import Glibc

/// A link over a byte stream (TCP, RFCOMM, a serial tty, a socketpair), driven by the event loop.
///
/// Connects without blocking (with a timeout), reads car lines, writes the `FrameQueue` when the
/// fd is writable (watching `.writable` only while bytes wait) and never blocks. Frames sent while
/// not up are dropped. On loss (EOF, EPIPE, ECONNRESET, EIO, a write stall, a failed connect) the
/// state goes `.down(reason)` and a reconnect follows after a back-off (0.5 s doubling, at most 5 s).
public final class StreamLink<Connector: StreamConnector>: CarLink {
    /// The kind of stream and its address.
    public let connector: Connector
    /// A short name for logs.
    public var name: String { connector.name }
    /// The current state; `.down("not started")` before `start()`.
    public private(set) var state: LinkState = .down(reason: "not started")
    /// Called on every state change.
    public var onStateChange: ((LinkState) -> Void)?
    /// Called for every line the car sends.
    public var onLine: ((CarLine) -> Void)?
    /// How long a connect may take.
    public var connectTimeout: Duration
    /// How long queued bytes may wait without any progress before the link counts as lost.
    public var writeStallTimeout: Duration = .seconds(2)
    /// How often shutdown checks whether the flush is complete.
    public var flushPollInterval: Duration = .milliseconds(10)
    /// The reconnect delays.
    public private(set) var backoff = Backoff()
    /// The delay of the most recently scheduled reconnect.
    public private(set) var lastRetryDelay: Duration?
    /// How many connects were started.
    public private(set) var connectAttempts = 0
    /// How many connects succeeded.
    public private(set) var connectionsMade = 0
    /// Frames not yet written.
    public var pendingFrames: [Frame] { queue.pendingFrames }

    private let loop: EventLoop
    private var queue: FrameQueue
    private var assembler = LineAssembler()
    private var fd: Int32 = -1
    private var watchingWritable = false
    private var connectTimer: EventLoop.TimerID?
    private var reconnectTimer: EventLoop.TimerID?
    private var stallTimer: EventLoop.TimerID?
    private var flushTimer: EventLoop.TimerID?
    private var lastWriteProgress = Instant.zero
    private var started = false
    private var shuttingDown = false
    private var shutdownDeadline = Instant.zero
    private var shutdownCallbacks: [() -> Void] = []

    /// Creates a link; nothing happens until `start()`.
    public init(
        connector: Connector, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(),
        connectTimeout: Duration = .seconds(5)
    ) {
        self.connector = connector
        self.loop = loop
        self.queue = FrameQueue(encoder: encoder)
        self.connectTimeout = connectTimeout
    }

    deinit {
        for timer in [connectTimer, reconnectTimer, stallTimer, flushTimer] {
            if let timer { loop.cancel(timer) }
        }
        if fd >= 0 {
            loop.unwatch(fd)
            Syscall.close(fd)
        }
    }

    /// Starts connecting.
    public func start() {
        guard !started, !shuttingDown else { return }
        started = true
        connect()
    }

    /// Queues `frame` and writes what the fd takes now; dropped unless the link is up.
    public func send(_ frame: Frame) {
        guard state == .up, fd >= 0 else { return }
        queue.push(frame)
        flush()
    }

    /// Stops reconnecting, flushes queued bytes until `flushWithin` passes, closes, then calls `done`.
    public func shutdown(flushWithin: Duration, then done: @escaping () -> Void) {
        shutdownCallbacks.append(done)
        if state == .closed {
            finishShutdown()
            return
        }
        guard !shuttingDown else { return }
        shuttingDown = true
        cancel(&reconnectTimer)
        guard state == .up, fd >= 0 else {
            finishShutdown()
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
        do {
            let (newFD, progress) = try connector.open()
            fd = newFD
            switch progress {
            case .connected:
                becomeUp()
            case .inProgress:
                try loop.watch(newFD, for: .writable) { [weak self] events in self?.connectFinished(events) }
                connectTimer = loop.schedule(after: connectTimeout) { [weak self] in
                    guard let self else { return }
                    self.connectTimer = nil
                    self.lose(self.connector.connectTimeoutSentence(self.connectTimeout))
                }
            }
        } catch {
            lose(Self.sentence(for: error))
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
        var buffer = [UInt8](repeating: 0, count: 4096)
        let descriptor = fd
        for _ in 0..<16 {
            let result: Int?
            do {
                result = try buffer.withUnsafeMutableBytes { try Syscall.read(descriptor, into: $0) }
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
            let lines = assembler.append(buffer[..<count])
            let time = loop.now()
            for line in lines {
                onLine?(CarLine(time: time, text: line))
                guard fd == descriptor else { return }
            }
            if count < buffer.count { return }
        }
    }

    private func deliverPartialLine() {
        if let rest = assembler.finish() { onLine?(CarLine(time: loop.now(), text: rest)) }
    }

    private func flush() {
        guard fd >= 0, state == .up else { return }
        var progressed = false
        while queue.hasPendingBytes {
            let bytes = queue.nextBytes()
            let written: Int?
            do {
                written = try bytes.withUnsafeBytes { try connector.write(fd, $0) }
            } catch let error as SystemError {
                lose(connector.lossSentence(error))
                return
            } catch {
                lose("writing to \(name) failed: \(error)")
                return
            }
            guard let count = written, count > 0 else { break }
            queue.consume(count)
            progressed = true
        }
        let now = loop.now()
        if progressed { lastWriteProgress = now }
        if queue.hasPendingBytes {
            setWatchWritable(true)
            if stallTimer == nil {
                // Bytes just started waiting: the stall clock starts now.
                lastWriteProgress = now
                scheduleStallCheck()
            }
        } else {
            setWatchWritable(false)
            cancel(&stallTimer)
        }
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

    private func scheduleStallCheck() {
        stallTimer = loop.schedule(at: lastWriteProgress.advanced(by: writeStallTimeout)) { [weak self] in
            guard let self else { return }
            self.stallTimer = nil
            guard self.fd >= 0, self.queue.hasPendingBytes else { return }
            if self.loop.now().duration(since: self.lastWriteProgress) >= self.writeStallTimeout {
                let seconds = SocketSupport.secondsText(self.writeStallTimeout)
                self.lose("the car has taken no data for \(seconds) s (write stalled on \(self.name))")
            } else {
                self.scheduleStallCheck()
            }
        }
    }

    // MARK: loss and shutdown

    private func lose(_ reason: String) {
        closeFD()
        if shuttingDown {
            finishShutdown()
            return
        }
        let delay = backoff.next()
        lastRetryDelay = delay
        setState(.down(reason: reason))
        guard !shuttingDown, reconnectTimer == nil else { return }
        reconnectTimer = loop.schedule(after: delay) { [weak self] in self?.connect() }
    }

    private func pollFlush() {
        let kernelQueued = fd >= 0 ? (connector.unsentByteCount(fd) ?? 0) : 0
        if fd < 0 || (!queue.hasPendingBytes && kernelQueued == 0) || loop.now() >= shutdownDeadline {
            finishShutdown()
            return
        }
        flushTimer = loop.schedule(after: flushPollInterval) { [weak self] in
            self?.flushTimer = nil
            self?.pollFlush()
        }
    }

    private func finishShutdown() {
        if fd >= 0 {
            // Read what the car sent last, so closing a socket with unread data does not reset it.
            readRemainingLines()
            if fd >= 0 { connector.prepareClose(fd) }
        }
        closeFD()
        cancel(&reconnectTimer)
        setState(.closed)
        let callbacks = shutdownCallbacks
        shutdownCallbacks.removeAll()
        for callback in callbacks { loop.execute(callback) }
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
        cancel(&stallTimer)
        cancel(&flushTimer)
        if fd >= 0 {
            loop.unwatch(fd)
            Syscall.close(fd)
            fd = -1
        }
        watchingWritable = false
        queue.clear()
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
