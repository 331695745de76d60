import DriveCore
import CLinux
import Glibc

/// One thread, one epoll set: fds, timers (one timerfd armed at the earliest deadline,
/// absolute on CLOCK_MONOTONIC so periods never drift) and signals (a signalfd).
///
/// Nothing here polls or sleeps: an idle loop blocks in `epoll_wait` with no timeout
/// and wakes only when an fd, a timer or a signal needs it (`wakeups` counts them).
/// Not thread-safe: create, use and run it on one thread. The one exception is `submitter`
/// (and `submit`): other threads hand work to the loop through it (an eventfd-woken mailbox).
/// A debug build checks this: every entry point but `submit`, `now()` and the read-only properties
/// stops the process when called off the loop's thread (`isOnLoopThread`); a release build checks nothing.
///
/// The loop keeps the fds, the timers and the queued work; its clock (a `LoopClock`, chosen by `Clock`)
/// says what time it is and what one turn does, as swift-nio splits `SelectableEventLoop` from
/// `EmbeddedEventLoop`. The real clock (`MonotonicLoopClock`) reads CLOCK_MONOTONIC, arms the timerfd and
/// blocks in `epoll_wait`; the manual one (`ManualLoopClock`, for tests) moves only when advanced and fires
/// timers in deadline order as it moves, while real fds are still polled, so pipe and socketpair I/O keeps
/// working. Callers (`schedule`, `cancel`, `watch`, `execute`, `now`) cannot tell the two apart, and the loop
/// itself never asks which one it has.
public final class EventLoop {
    /// Where `now()` comes from and how the loop waits.
    public enum Clock: Sendable {
        /// CLOCK_MONOTONIC; timers on the timerfd; `epoll_wait` blocks (production).
        case monotonic
        /// Test time starting at `start`: it moves only when the loop is told to advance it, in no
        /// wall time at all.
        case manual(start: Instant)

        /// A manual clock starting at 1000 s (any origin will do; deadlines are relative to `now()`).
        public static var manual: Clock { .manual(start: Instant(nanoseconds: 1_000_000_000_000)) }

        fileprivate func makeLoopClock() -> any LoopClock {
            switch self {
            case .monotonic: return MonotonicLoopClock()
            case .manual(let start): return ManualLoopClock(start: start)
            }
        }
    }

    /// Identifies a scheduled timer, for `cancel`.
    public struct TimerID: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    private struct Watch {
        /// Its epoll token, never reused: an event the kernel returned for a watch that is gone (unwatched by
        /// a handler earlier in the same batch) finds no watch rather than a newer one on the same fd.
        let token: UInt64
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
    /// The watched fds by epoll token, and each watched fd's token.
    private var watches: [UInt64: Watch] = [:]
    private var tokenByFD: [Int32: UInt64] = [:]
    /// The next watch token or timer id (below 16: the loop's own tokens).
    private var nextToken: UInt64 = 16
    private var timers: [Timer] = []          // sorted by deadline, then id
    /// The deadline the timerfd is armed at (nil: disarmed). It may be earlier than the first
    /// timer's (see `armTimerFD`), never later.
    private var armedDeadline: Instant?
    private var pending: [() -> Void] = []
    private var stopped = false
    private let clock: any LoopClock
    /// `epoll_wait`'s output, allocated once (a wake-up allocates nothing).
    private let eventBuffer = UnsafeMutablePointer<epoll_event>.allocate(capacity: eventBufferCount)
    private static let eventBufferCount = 64
    private static let timerToken: UInt64 = 1
    private static let signalToken: UInt64 = 2
    private static let mailboxToken: UInt64 = 3

    /// Hands work to the loop from any thread (see `Submitter`).
    public let submitter: Submitter
    /// The thread that created the loop, which must also be the one that runs it: calls made before
    /// `run()` (watching fds, scheduling timers while setting up) come from that thread, so one fixed
    /// thread is right from `init` on, without a hand-over when the loop starts.
    private let ownerThread = pthread_self()

    /// How many times `epoll_wait` returned; an idle loop does not move it.
    public internal(set) var wakeups: Int = 0

    /// Creates the epoll set and its timerfd, on `clock` (the real CLOCK_MONOTONIC by default).
    public init(clock: Clock = .monotonic) throws {
        self.clock = clock.makeLoopClock()
        epollFD = try Syscall.retrying("epoll_create1", forbiddingEINVAL: true) { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            timerFD = try Syscall.retrying("timerfd_create", forbiddingEINVAL: true) {
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
        eventBuffer.deallocate()
        Syscall.close(timerFD)
        Syscall.close(signalFD)
        Syscall.close(epollFD)
    }

    /// The current instant: CLOCK_MONOTONIC, or the manual clock's time.
    public func now() -> Instant { clock.now() }

    /// `deadline`, an instant on CLOCK_MONOTONIC that comes from outside the loop (a library's own
    /// timeout), as an instant on the loop's clock: itself on the real clock, now on a manual one.
    public func instant(forMonotonic deadline: Instant) -> Instant { clock.instant(forMonotonic: deadline) }

    // MARK: fds

    /// Watches `fd` for `events`; `handler` gets the events that occurred (including hangup and error).
    public func watch(_ fd: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) throws {
        assertOnLoopThread()
        if tokenByFD[fd] != nil { unwatch(fd) }
        let token = nextToken
        nextToken += 1
        try addToEpoll(fd: fd, events: events, token: token)
        watches[token] = Watch(token: token, events: events, handler: handler)
        tokenByFD[fd] = token
    }

    /// Changes what a watched `fd` is watched for (e.g. add `.writable` while output is queued).
    public func change(_ fd: Int32, to events: IOEvents) throws {
        assertOnLoopThread()
        guard let token = tokenByFD[fd], let watch = watches[token], watch.events != events else { return }
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        try Syscall.retrying("epoll_ctl(MOD)", fd: fd, forbiddingEINVAL: true) { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
        watches[token]?.events = events
    }

    /// Stops watching `fd` (call before closing it). Unknown fds are ignored.
    public func unwatch(_ fd: Int32) {
        assertOnLoopThread()
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
        try Syscall.retrying("epoll_ctl(ADD)", fd: fd, forbiddingEINVAL: true) { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    // MARK: timers

    /// Runs `body` once at `deadline` (CLOCK_MONOTONIC); a deadline in the past runs at the next turn.
    @discardableResult
    public func schedule(at deadline: Instant, _ body: @escaping () -> Void) -> TimerID {
        assertOnLoopThread()
        let id = nextToken
        nextToken += 1
        let timer = Timer(id: id, deadline: deadline, body: body)
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.count
        timers.insert(timer, at: index)
        return TimerID(value: id)
    }

    /// Runs `body` once after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping () -> Void) -> TimerID {
        schedule(at: now().advanced(by: delay), body)
    }

    /// Cancels a timer that has not fired yet (no effect otherwise).
    public func cancel(_ id: TimerID) {
        assertOnLoopThread()
        guard let index = timers.firstIndex(where: { $0.id == id.value }) else { return }
        timers.remove(at: index)
    }

    /// The earliest scheduled timer deadline, if any.
    public var nextTimerDeadline: Instant? { timers.first?.deadline }

    /// Arms the timerfd for the first timer, just before the real clock waits (a manual clock fires
    /// timers as it is advanced and leaves the timerfd disarmed). A timerfd already armed at or before
    /// the first deadline is left alone: it wakes the loop early once, which arms it again, so a
    /// deadline that keeps moving later (the stream period after every report) costs no system call.
    /// With no timer left it is disarmed, so an idle loop does not wake.
    func armTimerFD() {
        let wanted = timers.first?.deadline
        if wanted == armedDeadline { return }
        if let wanted, let armed = armedDeadline, armed <= wanted { return }
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

    private func readTimerFD() -> UInt64 {
        var expirations: UInt64 = 0
        _ = Glibc.read(timerFD, &expirations, 8)
        return expirations
    }

    private func fireDueTimers() {
        _ = readTimerFD()
        armedDeadline = nil  // expired; `poll` arms it again before it waits
        fireTimers(dueBy: now())
    }

    /// Runs the timers due by `instant` that were scheduled before this pass, earliest first, and returns
    /// whether any ran. A timer one of them schedules at or before `instant` waits for the next turn (as
    /// `schedule(at:)` promises for a deadline in the past): a timer that keeps rescheduling itself for now
    /// must not keep the loop from its fds and signals. One did (a link's queue check during a shutdown
    /// flush) and the loop never saw SIGTERM again; `KernelQueueAccounting` was mended, this is the rule.
    @discardableResult
    func fireTimers(dueBy instant: Instant) -> Bool {
        // Timer ids grow with every schedule, so an id from this pass is at least `firstNew`.
        let firstNew = nextToken
        var fired = false
        var index = 0
        while index < timers.count, timers[index].deadline <= instant {
            if timers[index].id >= firstNew {
                index += 1
                continue
            }
            let timer = timers.remove(at: index)
            fired = true
            timer.body()
            index = 0  // the body may have scheduled or cancelled timers anywhere before this one
        }
        return fired
    }

    // MARK: signals

    /// Blocks `signals` for this thread and delivers them through a signalfd to `handler`.
    /// Call it early, before other threads exist, so no thread takes the signal the usual way.
    public func watchSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        assertOnLoopThread()
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        let rc = pthread_sigmask(SIG_BLOCK, &mask, nil)
        if rc != 0 { throw SystemError(call: "pthread_sigmask", errno: rc) }
        let fd = try Syscall.retrying("signalfd", forbiddingEINVAL: true) { signalfd(signalFD, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
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
        assertOnLoopThread()
        pending.append(body)
    }

    /// Runs `body` on the loop's thread soon; callable from any thread (like swift-nio's
    /// `EventLoop.execute`). Same as `submitter.submit(body)`.
    public func submit(_ body: @escaping @Sendable () -> Void) {
        submitter.submit(body)
    }

    /// True on the loop's thread: the one that created it (and runs it).
    public var isOnLoopThread: Bool { pthread_equal(pthread_self(), ownerThread) != 0 }

    /// Stops a debug build when called off the loop's thread: the loop's state, and that of everything
    /// on it, has no lock, so such a call races with the loop. An `assert`, inlined into the caller: a
    /// release build's hot paths pay nothing for it.
    @inlinable
    public func assertOnLoopThread(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnLoopThread, "\(function) called off the event loop's thread (hand it over with submit)", file: file, line: line)
    }

    /// The thread-safe way into a loop: a locked list of closures and an eventfd the loop's epoll
    /// set watches. `submit` may be called from any thread, also after the loop is gone (then the
    /// closure never runs).
    public final class Submitter: @unchecked Sendable {
        fileprivate let fd: Int32
        private let lock = ConditionLock()
        /// Guarded by `lock`.
        private var bodies: [@Sendable () -> Void] = []

        fileprivate init() throws {
            fd = try Syscall.retrying("eventfd", forbiddingEINVAL: true) { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
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
    public func stop() {
        assertOnLoopThread()
        stopped = true
    }

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
    /// On a manual clock it advances time to `deadline` through every timer on the way (no wall time),
    /// and returns early at the instant `stop()` was called.
    public func run(until deadline: Instant) throws {
        stopped = false
        try clock.run(self, until: deadline)
    }

    /// Waits once (at most `timeout`, forever if nil) and handles what is ready.
    ///
    /// On a manual clock, "waiting" is advancing time: what is ready now (work, due timers, fds polled
    /// with a zero timeout) is handled; if nothing was, time moves on by `timeout`, but no further than
    /// the next timer, and what is due then runs. With no timeout and no timer, nothing but an fd or a
    /// `submit` can happen, so it blocks in `epoll_wait` for those, as the real loop does.
    public func runOnce(timeout: Duration?) throws {
        assertOnLoopThread()
        runPending()
        if stopped { return }
        try clock.runOnce(self, timeout: timeout)
    }

    /// Moves a manual clock on by `duration`, firing every timer due on the way (see `advance(to:)`).
    public func advance(by duration: Duration) throws {
        try advance(to: now().advanced(by: duration))
    }

    /// Moves a manual clock to `instant` (never back): at each timer deadline on the way the clock
    /// stands at that deadline, the due timers run in deadline order, then `execute`d work and ready
    /// fds (polled with a zero timeout) are handled until the instant is quiet; then the same at
    /// `instant` itself. Takes no wall time. Manual clock only.
    public func advance(to instant: Instant) throws {
        assertOnLoopThread()
        try clock.advance(self, to: instant)
    }

    /// True while `execute`d work waits to run.
    var hasPendingWork: Bool { !pending.isEmpty }

    /// One `epoll_wait` (at most `timeoutMilliseconds`, -1 forever) and the handling of what it
    /// returned; returns how many events it handled. The clock arms the timerfd and counts `wakeups`.
    func poll(timeoutMilliseconds: Int32) throws -> Int {
        let events = eventBuffer
        let count = epoll_wait(epollFD, events, Int32(Self.eventBufferCount), timeoutMilliseconds)
        if count < 0 {
            let code = errno
            if code == EINTR { return 0 }
            try Syscall.check(code, "epoll_wait", forbiddingEINVAL: true)
        }
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
        return Int(count)
    }

    func runPending() {
        while !pending.isEmpty {
            let work = pending
            pending.removeAll()
            for body in work { body() }
        }
    }
}
