import DriveCore

/// The production clock of an `EventLoop`: CLOCK_MONOTONIC, timers on the loop's timerfd (armed just
/// before each wait), and an `epoll_wait` that blocks until an fd, a timer or a signal needs the loop.
final class MonotonicLoopClock: LoopClock {
    func now() -> Instant { Instant(nanoseconds: MonotonicClock.nanoseconds()) }

    func instant(forMonotonic deadline: Instant) -> Instant { deadline }

    func runOnce(_ loop: EventLoop, timeout: Duration?) throws {
        var timeoutMilliseconds: Int32 = -1
        if loop.hasPendingWork {
            timeoutMilliseconds = 0
        } else if let timeout {
            let ms = (timeout.nanoseconds + 999_999) / 1_000_000
            timeoutMilliseconds = Int32(clamping: max(0, ms))
        }
        loop.armTimerFD()
        _ = try loop.poll(timeoutMilliseconds: timeoutMilliseconds)
        loop.wakeups += 1
    }

    func run(_ loop: EventLoop, until deadline: Instant) throws {
        while !loop.isStopped {
            let remaining = deadline.duration(since: now())
            if remaining <= .zero { break }
            try loop.runOnce(timeout: remaining)
        }
    }

    func advance(_ loop: EventLoop, to instant: Instant) throws {
        preconditionFailure("EventLoop.advance: the loop runs on the real clock")
    }
}
