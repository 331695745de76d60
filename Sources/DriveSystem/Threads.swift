import DriveCore
import CLinux
import Glibc

/// A mutex with one condition variable (waits on CLOCK_MONOTONIC), for the few places where
/// another thread hands work to or from the event loop.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// Creates an unlocked lock.
    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Locks.
    public func lock() { pthread_mutex_lock(mutex) }
    /// Unlocks.
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits for `broadcast` (the lock must be held); spurious wake-ups happen, so wait in a loop.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for `broadcast` until `deadline` on CLOCK_MONOTONIC; false once the deadline passed.
    @discardableResult
    public func wait(until deadline: Instant) -> Bool {
        let ns = max(deadline.nanoseconds, 0)
        var spec = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &spec) == 0
    }

    /// Wakes every waiter.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

/// Detached helper threads (name resolution, the log writer) that never take a process signal.
public enum BackgroundThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts a detached thread running `body`. Every signal is blocked in the new thread (the
    /// mask is set in the creating thread around `pthread_create`, so there is no window), so
    /// SIGINT/SIGTERM/SIGHUP keep going to the event loop's signalfd whichever thread created it.
    public static func start(_ body: @escaping @Sendable () -> Void) throws {
        var all = sigset_t()
        sigfillset(&all)
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<Box>.fromOpaque(context).release()
            throw SystemError(call: "pthread_create", errno: rc)
        }
        pthread_detach(thread)
    }
}

/// A value that belongs to an event loop's thread, carried through a `@Sendable` closure (a helper
/// thread's `EventLoop.submit`) and touched again only on the thread that wrapped it.
public struct LoopBound<Value>: @unchecked Sendable {
    private let wrapped: Value
    private let owner: pthread_t

    /// Wraps `value` for the current thread.
    public init(_ value: Value) {
        wrapped = value
        owner = pthread_self()
    }

    /// The value; only on the thread that wrapped it.
    public var value: Value {
        precondition(pthread_equal(pthread_self(), owner) != 0, "LoopBound value used off its loop's thread")
        return wrapped
    }
}
