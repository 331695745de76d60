import DriveCore
import Glibc

extension EventLoop {
    /// Runs `work` on a helper thread and then `done` with its result on this loop's thread, through the
    /// mailbox: a file saved with `fsync` (a slow SD card, a busy disk) must not hold up the frames and the
    /// timers, stops included. When no thread can be started, `work` runs here, as it did before. Keep the
    /// returned handle where the work must not be lost when the run ends first: `finish(waitingUntil:)`.
    @discardableResult
    public func offload<Result: Sendable>(_ work: @escaping @Sendable () -> Result, then done: @escaping (Result) -> Void) -> Offloaded<Result> {
        assertOnLoopThread()
        let handle = Offloaded(done)
        let submitter = self.submitter
        do {
            try BackgroundThread.start {
                handle.store(work())
                submitter.submit { handle.complete() }
            }
        } catch {
            handle.store(work())
            handle.complete()
        }
        return handle
    }
}

/// Work offloaded from an event loop (`EventLoop.offload`): its result, stored by the helper thread, and the
/// completion that runs once with it on the loop's thread.
public final class Offloaded<Result: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var result: Result?
    /// Touched on the loop's thread only.
    private var done: ((Result) -> Void)?
    private let owner = pthread_self()

    init(_ done: @escaping (Result) -> Void) { self.done = done }

    /// The helper thread's result.
    func store(_ value: Result) {
        lock.withLock {
            result = value
            lock.broadcast()
        }
    }

    /// True once the completion has run.
    public var isComplete: Bool { done == nil }

    /// Runs the completion with the result, once, if the result is there (loop thread).
    func complete() {
        precondition(pthread_equal(pthread_self(), owner) != 0, "Offloaded completed off its loop's thread")
        guard let finish = done, let value = lock.withLock({ result }) else { return }
        done = nil
        finish(value)
    }

    /// For a run that ends while the work is still going (its loop no longer runs the mailbox): waits for the
    /// result until `deadline`, then runs the completion here. False when the work did not finish in time.
    @discardableResult
    public func finish(waitingUntil deadline: Instant) -> Bool {
        guard !isComplete else { return true }
        let arrived = lock.withLock { () -> Bool in
            while result == nil {
                if !lock.wait(until: deadline) { break }
            }
            return result != nil
        }
        if arrived { complete() }
        return arrived
    }
}
