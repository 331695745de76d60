import DriveCore

/// What an `EventLoop` asks its clock: the time, and how to spend one turn waiting for the next thing.
///
/// The loop owns the fds, the timers and the queued work, and offers the clock the pieces of a turn
/// (`runPending`, `fireTimers(dueBy:)`, `armTimerFD`, `poll(timeoutMilliseconds:)`); the clock puts them
/// together. `MonotonicLoopClock` is production: CLOCK_MONOTONIC, the timerfd, a blocking `epoll_wait`.
/// `ManualLoopClock` is for tests: time that moves only when advanced. Choosing the clock once, when the
/// loop is made, keeps the real path free of "is this a test?" checks.
protocol LoopClock: AnyObject {
    /// The current instant.
    func now() -> Instant

    /// `deadline` on CLOCK_MONOTONIC, from outside the loop, as an instant on this clock.
    func instant(forMonotonic deadline: Instant) -> Instant

    /// One turn of `loop` (its queued work already ran): waits at most `timeout` (nil: until something
    /// happens) and handles what became ready.
    func runOnce(_ loop: EventLoop, timeout: Duration?) throws

    /// Turns of `loop` until it is stopped or `deadline` has come.
    func run(_ loop: EventLoop, until deadline: Instant) throws

    /// Moves time on to `instant`, running what falls due on the way.
    func advance(_ loop: EventLoop, to instant: Instant) throws
}
