import DriveCore
import Glibc

/// Writes lines to an fd that may stall (stderr under a stuck journal or an unread pipe, a dry
/// run's stdout) without ever blocking the caller.
///
/// `write` only appends to a bounded buffer (at most `maxLines` lines and `maxBytes` bytes,
/// counting what is being written); a helper thread, started on the first line, does the blocking
/// `write(2)`s. The fd's flags are never touched (`O_NONBLOCK` on fd 1 or 2 would reach the shell
/// through the shared open file description). When the buffer is full a line is dropped and
/// counted; once there is room again one line (`dropNotice(count)`) says how many were lost.
/// `drain` (and, at a normal process exit, `drainAll`) waits a bounded time for the rest.
public final class BoundedWriter: @unchecked Sendable {
    /// Where the lines go.
    public let fd: Int32
    /// At most this many lines wait (including those being written).
    public let maxLines: Int
    /// At most this many bytes wait (including those being written).
    public let maxBytes: Int
    private let dropNotice: @Sendable (Int) -> String
    private let lock = ConditionLock()
    private var lines: [[UInt8]] = []
    private var queuedLines = 0
    private var queuedBytes = 0
    private var dropped = 0
    private var droppedTotal = 0
    private var failure: Int32?
    private var threadStarted = false
    private var finishing = false
    private var lastProgress: Int64 = 0

    /// The writer for fd 2, shared by the log sink and the command line's error messages.
    public static let standardError = BoundedWriter(fd: 2) { count in
        "carbridge: \(count) log line\(count == 1 ? "" : "s") dropped (stderr was not being read)"
    }

    /// Creates a writer for `fd`; nothing runs until the first line.
    public init(
        fd: Int32, maxLines: Int = 256, maxBytes: Int = 64 * 1024,
        dropNotice: @escaping @Sendable (Int) -> String
    ) {
        self.fd = fd
        self.maxLines = maxLines
        self.maxBytes = maxBytes
        self.dropNotice = dropNotice
        Self.register(self)
    }

    /// Queues `line` (a newline is added); false when it was dropped (buffer full, or the fd failed).
    @discardableResult
    public func write(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        lock.lock()
        defer { lock.unlock() }
        if failure != nil || finishing { return false }
        var notice: [UInt8] = []
        if dropped > 0 { notice = Array((dropNotice(dropped) + "\n").utf8) }
        let extraLines = notice.isEmpty ? 1 : 2
        guard queuedLines + extraLines <= maxLines, queuedBytes + bytes.count + notice.count <= maxBytes else {
            dropped += 1
            droppedTotal += 1
            return false
        }
        if !notice.isEmpty {
            append(notice)
            dropped = 0
        }
        append(bytes)
        if !threadStarted {
            threadStarted = true
            do {
                try BackgroundThread.start { [self] in run() }
            } catch {
                threadStarted = false
                failure = EAGAIN
            }
        }
        lock.broadcast()
        return true
    }

    /// Lines dropped so far because the buffer was full.
    public var droppedLines: Int { lock.withLock { droppedTotal } }

    /// Lines not yet written (including those being written).
    public var pendingLines: Int { lock.withLock { queuedLines } }

    /// The errno of a failed write (EPIPE, EBADF…); after it every line is dropped silently.
    public var writeError: Int32? { lock.withLock { failure } }

    /// Waits until every queued line was written, at most `timeout`, and gives up sooner when the
    /// fd takes nothing for `stallLimit`. Writes the drop notice first if lines were lost. True when
    /// everything was written.
    @discardableResult
    public func drain(within timeout: Duration, stallLimit: Duration = .milliseconds(300)) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if dropped > 0, failure == nil {
            append(Array((dropNotice(dropped) + "\n").utf8))
            dropped = 0
            lock.broadcast()
        }
        let deadline = MonotonicClock.nanoseconds() + timeout.nanoseconds
        while queuedLines > 0, failure == nil, threadStarted {
            let now = MonotonicClock.nanoseconds()
            let stallAt = lastProgress + stallLimit.nanoseconds
            if now >= deadline || now >= stallAt { break }
            lock.wait(until: Instant(nanoseconds: min(deadline, stallAt)))
        }
        return queuedLines == 0
    }

    /// Writes what it can within `timeout` (as `drain`), then lets the helper thread end.
    public func finish(within timeout: Duration = .zero) {
        if timeout > .zero { drain(within: timeout) }
        lock.withLock {
            finishing = true
            lock.broadcast()
        }
    }

    private func append(_ bytes: [UInt8]) {
        // An idle writer has not stalled: the stall clock starts when lines start waiting.
        if queuedLines == 0 { lastProgress = MonotonicClock.nanoseconds() }
        lines.append(bytes)
        queuedLines += 1
        queuedBytes += bytes.count
    }

    /// The helper thread: writes whole lines, up to 4 KiB per `write(2)`, and releases their room as
    /// soon as they are written.
    private func run() {
        lock.lock()
        while true {
            while lines.isEmpty && !finishing { lock.wait() }
            if lines.isEmpty { break }
            var chunk: [UInt8] = []
            var taken = 0
            while taken < lines.count, chunk.isEmpty || chunk.count + lines[taken].count <= 4096 {
                chunk += lines[taken]
                taken += 1
            }
            lock.unlock()
            let error = Self.writeAll(fd, chunk)
            lock.lock()
            lines.removeFirst(taken)
            queuedLines -= taken
            queuedBytes -= chunk.count
            lastProgress = MonotonicClock.nanoseconds()
            if let error {
                failure = error
                lines.removeAll()
                queuedLines = 0
                queuedBytes = 0
            } else if lines.isEmpty, dropped > 0 {
                append(Array((dropNotice(dropped) + "\n").utf8))
                dropped = 0
            }
            lock.broadcast()
            if failure != nil { break }
        }
        threadStarted = false
        lock.broadcast()
        lock.unlock()
    }

    /// `Syscall.writeAll`, its failure as the errno `writeError` reports.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        do {
            try Syscall.writeAll(fd, bytes)
            return nil
        } catch {
            return (error as? SystemError)?.errno ?? EIO
        }
    }

    // MARK: every writer, drained at a normal exit

    private final class WeakWriter {
        weak var writer: BoundedWriter?
        init(_ writer: BoundedWriter) { self.writer = writer }
    }

    private static let registryLock = ConditionLock()
    nonisolated(unsafe) private static var registry: [WeakWriter] = []
    nonisolated(unsafe) private static var exitHookInstalled = false

    private static func register(_ writer: BoundedWriter) {
        registryLock.withLock {
            registry.removeAll { $0.writer == nil }
            registry.append(WeakWriter(writer))
            if !exitHookInstalled {
                exitHookInstalled = true
                atexit { BoundedWriter.drainAll(within: .seconds(1)) }
            }
        }
    }

    /// Drains every writer, `timeout` in all (each gives up sooner once its fd takes nothing for
    /// 300 ms): the last lines reach a readable fd, and a stalled one never holds the exit up.
    /// Runs by itself at a normal exit (`atexit`).
    public static func drainAll(within timeout: Duration) {
        let writers = registryLock.withLock { registry.compactMap(\.writer) }
        let deadline = MonotonicClock.nanoseconds() + timeout.nanoseconds
        for writer in writers {
            let left = deadline - MonotonicClock.nanoseconds()
            if left <= 0 { break }
            writer.drain(within: .nanoseconds(left))
        }
    }
}
