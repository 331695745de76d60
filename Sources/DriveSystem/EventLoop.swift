import DriveCore
import Glibc

/// One thread, one epoll set: fds, timers (one timerfd armed at the earliest deadline,
/// absolute on CLOCK_MONOTONIC so periods never drift) and signals (a signalfd).
///
/// Nothing here polls or sleeps: an idle loop blocks in `epoll_wait` with no timeout
/// and wakes only when an fd, a timer or a signal needs it (`wakeups` counts them).
/// Not thread-safe: create, use and run it on one thread. The one exception is `submitter`
/// (and `submit`): other threads hand work to the loop through it (an eventfd-woken mailbox).
public final class EventLoop {
    /// Identifies a scheduled timer, for `cancel`.
    public struct TimerID: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    private struct Watch {
        let fd: Int32
        var events: IOEvents
        let handler: (IOEvents) -> Void
    }

    private struct Timer {
        let id: UInt64
        let deadline: Instant
        let body: () -> Void
    }

    private let epollFD: Int32
    private let timerFD: Int32
    private var signalFD: Int32 = -1
    private var signalHandler: ((Int32) -> Void)?
    private var watches: [UInt64: Watch] = [:]
    private var tokenByFD: [Int32: UInt64] = [:]
    private var nextToken: UInt64 = 16
    private var timers: [Timer] = []          // sorted by deadline, then id
    private var armedDeadline: Instant?
    private var pending: [() -> Void] = []
    private var stopped = false
    private static let timerToken: UInt64 = 1
    private static let signalToken: UInt64 = 2
    private static let mailboxToken: UInt64 = 3

    /// Hands work to the loop from any thread (see `Submitter`).
    public let submitter: Submitter
    /// The thread that created the loop (and runs it).
    private let ownerThread = pthread_self()

    /// How many times `epoll_wait` returned; an idle loop does not move it.
    public private(set) var wakeups: Int = 0

    /// Creates the epoll set and its timerfd.
    public init() throws {
        epollFD = try Syscall.retrying("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            timerFD = try Syscall.retrying("timerfd_create") {
                timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
            }
        } catch {
            Syscall.close(epollFD)
            throw error
        }
        do {
            submitter = try Submitter()
        } catch {
            Syscall.close(timerFD)
            Syscall.close(epollFD)
            throw error
        }
        try addToEpoll(fd: timerFD, events: .readable, token: Self.timerToken)
        try addToEpoll(fd: submitter.fd, events: .readable, token: Self.mailboxToken)
    }

    deinit {
        Syscall.close(timerFD)
        Syscall.close(signalFD)
        Syscall.close(epollFD)
    }

    /// The current instant on CLOCK_MONOTONIC.
    public func now() -> Instant { Instant(nanoseconds: MonotonicClock.nanoseconds()) }

    // MARK: fds

    /// Watches `fd` for `events`; `handler` gets the events that occurred (including hangup and error).
    public func watch(_ fd: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) throws {
        if tokenByFD[fd] != nil { unwatch(fd) }
        let token = nextToken
        nextToken += 1
        try addToEpoll(fd: fd, events: events, token: token)
        watches[token] = Watch(fd: fd, events: events, handler: handler)
        tokenByFD[fd] = token
    }

    /// Changes what a watched `fd` is watched for (e.g. add `.writable` while output is queued).
    public func change(_ fd: Int32, to events: IOEvents) throws {
        guard let token = tokenByFD[fd], var watch = watches[token] else { return }
        if watch.events == events { return }
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        try Syscall.retrying("epoll_ctl(MOD)") { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
        watch.events = events
        watches[token] = watch
    }

    /// Stops watching `fd` (call before closing it). Unknown fds are ignored.
    public func unwatch(_ fd: Int32) {
        guard let token = tokenByFD.removeValue(forKey: fd) else { return }
        watches[token] = nil
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    /// True when `fd` is being watched.
    public func isWatching(_ fd: Int32) -> Bool { tokenByFD[fd] != nil }

    private func addToEpoll(fd: Int32, events: IOEvents, token: UInt64) throws {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        try Syscall.retrying("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    // MARK: timers

    /// Runs `body` once at `deadline` (CLOCK_MONOTONIC); a deadline in the past runs at the next turn.
    @discardableResult
    public func schedule(at deadline: Instant, _ body: @escaping () -> Void) -> TimerID {
        let id = nextToken
        nextToken += 1
        let timer = Timer(id: id, deadline: deadline, body: body)
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.count
        timers.insert(timer, at: index)
        rearmTimer()
        return TimerID(value: id)
    }

    /// Runs `body` once after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping () -> Void) -> TimerID {
        schedule(at: now().advanced(by: delay), body)
    }

    /// Cancels a timer that has not fired yet (no effect otherwise).
    public func cancel(_ id: TimerID) {
        guard let index = timers.firstIndex(where: { $0.id == id.value }) else { return }
        timers.remove(at: index)
        rearmTimer()
    }

    /// The earliest scheduled timer deadline, if any.
    public var nextTimerDeadline: Instant? { timers.first?.deadline }

    private func rearmTimer() {
        let wanted = timers.first?.deadline
        if wanted == armedDeadline { return }
        armedDeadline = wanted
        var spec = itimerspec()
        if let wanted {
            // An all-zero it_value disarms; never ask for the origin itself.
            let ns = max(wanted.nanoseconds, 1)
            spec.it_value.tv_sec = Int(ns / 1_000_000_000)
            spec.it_value.tv_nsec = Int(ns % 1_000_000_000)
        }
        _ = timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    private func fireDueTimers() {
        var expirations: UInt64 = 0
        _ = Glibc.read(timerFD, &expirations, 8)
        armedDeadline = nil
        let current = now()
        while let first = timers.first, first.deadline <= current {
            timers.removeFirst()
            first.body()
        }
        rearmTimer()
    }

    // MARK: signals

    /// Blocks `signals` for this thread and delivers them through a signalfd to `handler`.
    /// Call it early, before other threads exist, so no thread takes the signal the usual way.
    public func watchSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        let rc = pthread_sigmask(SIG_BLOCK, &mask, nil)
        if rc != 0 { throw SystemError(call: "pthread_sigmask", errno: rc) }
        let fd = try Syscall.retrying("signalfd") { signalfd(signalFD, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
        if signalFD < 0 {
            signalFD = fd
            try addToEpoll(fd: fd, events: .readable, token: Self.signalToken)
        }
        signalHandler = handler
    }

    private func readSignals() {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        while Glibc.read(signalFD, &info, size) == size {
            signalHandler?(Int32(info.ssi_signo))
        }
    }

    // MARK: running

    /// Runs `body` on the loop's thread after the current event has been handled.
    /// Loop thread only; from another thread use `submit`.
    public func execute(_ body: @escaping () -> Void) {
        pending.append(body)
    }

    /// Runs `body` on the loop's thread soon; callable from any thread (like swift-nio's
    /// `EventLoop.execute`). Same as `submitter.submit(body)`.
    public func submit(_ body: @escaping @Sendable () -> Void) {
        submitter.submit(body)
    }

    /// True on the thread that created the loop.
    public var isOnLoopThread: Bool { pthread_equal(pthread_self(), ownerThread) != 0 }

    /// The thread-safe way into a loop: a locked list of closures and an eventfd the loop's epoll
    /// set watches. `submit` may be called from any thread, also after the loop is gone (then the
    /// closure never runs).
    public final class Submitter: @unchecked Sendable {
        fileprivate let fd: Int32
        private let lock = ConditionLock()
        private var bodies: [@Sendable () -> Void] = []

        fileprivate init() throws {
            fd = try Syscall.retrying("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        }

        deinit { Syscall.close(fd) }

        /// Queues `body` for the loop's thread and wakes the loop.
        public func submit(_ body: @escaping @Sendable () -> Void) {
            lock.lock()
            let wasEmpty = bodies.isEmpty
            bodies.append(body)
            lock.unlock()
            if wasEmpty {
                var one: UInt64 = 1
                _ = Glibc.write(fd, &one, 8)
            }
        }

        /// Clears the wake-up and takes what was submitted (loop thread).
        fileprivate func take() -> [@Sendable () -> Void] {
            var count: UInt64 = 0
            _ = Glibc.read(fd, &count, 8)
            lock.lock()
            defer { lock.unlock() }
            let taken = bodies
            bodies.removeAll()
            return taken
        }
    }

    /// Makes `run()` return after the current turn.
    public func stop() { stopped = true }

    /// True once `stop()` was called (and `run()` has not been started again).
    public var isStopped: Bool { stopped }

    /// Handles events until `stop()` is called.
    public func run() throws {
        stopped = false
        while !stopped {
            try runOnce(timeout: nil)
        }
    }

    /// Handles events until `stop()` is called or `deadline` passes (for tests and bounded waits).
    public func run(until deadline: Instant) throws {
        stopped = false
        while !stopped {
            let remaining = deadline.duration(since: now())
            if remaining <= .zero { break }
            try runOnce(timeout: remaining)
        }
    }

    /// Waits once (at most `timeout`, forever if nil) and handles what is ready.
    public func runOnce(timeout: Duration?) throws {
        runPending()
        if stopped { return }
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var timeoutMilliseconds: Int32 = -1
        if !pending.isEmpty {
            timeoutMilliseconds = 0
        } else if let timeout {
            let ms = (timeout.nanoseconds + 999_999) / 1_000_000
            timeoutMilliseconds = Int32(clamping: max(0, ms))
        }
        let count = epoll_wait(epollFD, &events, Int32(events.count), timeoutMilliseconds)
        if count < 0 {
            if errno == EINTR { return }
            throw SystemError(call: "epoll_wait", errno: errno)
        }
        wakeups += 1
        for index in 0..<Int(count) {
            let token = events[index].data.u64
            let happened = IOEvents(rawValue: events[index].events)
            switch token {
            case Self.timerToken: fireDueTimers()
            case Self.signalToken: readSignals()
            case Self.mailboxToken: for body in submitter.take() { body() }
            default:
                // A handler earlier in this batch may have unwatched this fd.
                if let watch = watches[token] { watch.handler(happened) }
            }
            runPending()
        }
    }

    private func runPending() {
        while !pending.isEmpty {
            let work = pending
            pending.removeAll()
            for body in work { body() }
        }
    }
}
