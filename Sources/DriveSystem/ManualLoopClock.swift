import DriveCore

/// The test clock of an `EventLoop` (like swift-nio's `EmbeddedEventLoop`): `now()` moves only when the
/// loop is told to advance it, in no wall time at all.
///
/// At each instant it settles: queued work, the timers due by then (in deadline order) and the fds, polled
/// with a zero timeout, are handled until nothing more is ready. The timerfd stays disarmed.
final class ManualLoopClock: LoopClock {
    private var current: Instant
    /// Bounds the zero-timeout polls at one instant (a level-triggered fd that stays ready would otherwise
    /// keep the instant from ever ending).
    private static let settleRounds = 64

    init(start: Instant) { current = start }

    func now() -> Instant { current }

    /// Now: manual time has no relation to CLOCK_MONOTONIC, so an outside deadline is looked at at once
    /// (its owner decides by its own clock whether it is due).
    func instant(forMonotonic deadline: Instant) -> Instant { current }

    /// Handles what is ready now; if nothing was (or an fd that stays ready kept the instant busy), moves
    /// time on by `timeout`, but no further than the next timer. With neither, only an fd or a `submit`
    /// can happen, so it blocks in `epoll_wait` for those, as the real loop does.
    func runOnce(_ loop: EventLoop, timeout: Duration?) throws {
        if try settle(loop) == .quiet { return }
        let limit = timeout.map { current.advanced(by: max($0, .zero)) }
        guard let target = Instant.earliest(loop.nextTimerDeadline, limit) else {
            if try loop.poll(timeoutMilliseconds: -1) > 0 { loop.wakeups += 1 }
            return
        }
        current = max(current, target)
        _ = try settle(loop)
    }

    /// Advances to `deadline`, returning early at the instant `stop()` was called.
    func run(_ loop: EventLoop, until deadline: Instant) throws {
        try advance(loop, to: deadline, untilStopped: true)
    }

    func advance(_ loop: EventLoop, to instant: Instant) throws {
        try advance(loop, to: instant, untilStopped: false)
    }

    private func advance(_ loop: EventLoop, to instant: Instant, untilStopped: Bool) throws {
        _ = try settle(loop, honouringStop: untilStopped)
        while !(untilStopped && loop.isStopped), let next = loop.nextTimerDeadline, next <= instant {
            current = max(current, next)
            _ = try settle(loop, honouringStop: untilStopped)
        }
        if untilStopped && loop.isStopped { return }
        current = max(current, instant)
        _ = try settle(loop, honouringStop: untilStopped)
    }

    private enum Settled { case idle, quiet, busy }

    /// Handles everything ready at the current instant until nothing is: `idle` when nothing was, `quiet`
    /// when something ran and then nothing was (or, `honouringStop`, `stop()` was called), `busy` after
    /// `settleRounds` polls that all found work. `advance` does not honour `stop()` (that is for `run`).
    private func settle(_ loop: EventLoop, honouringStop: Bool = true) throws -> Settled {
        var anything = false
        for _ in 0..<Self.settleRounds {
            var busy = loop.hasPendingWork
            loop.runPending()
            if loop.fireTimers(dueBy: current) { busy = true }
            loop.runPending()
            let events = try loop.poll(timeoutMilliseconds: 0)
            if events > 0 {
                loop.wakeups += 1
                busy = true
            }
            if !busy { return anything ? .quiet : .idle }
            anything = true
            if honouringStop && loop.isStopped { return .quiet }
        }
        return .busy
    }
}
