import DriveCore

/// One loop timer that follows a pure object's `nextDeadline`: `arm(at:)` after every step re-schedules
/// it only when the deadline changed, and `arm(at: nil)` (or `cancel()`) takes it off the loop.
///
/// `action` runs at the deadline; by then the timer is disarmed (`deadline` is nil), so the action
/// re-arms it at the object's new deadline. The action is kept by the timer: capture its owner weakly.
public final class DeadlineTimer {
    private let loop: EventLoop
    private let action: () -> Void
    @exclusivity(unchecked) private var timer: EventLoop.TimerID?
    /// The instant the timer is armed at; nil when it is not armed.
    @exclusivity(unchecked) public private(set) var deadline: Instant?

    /// A disarmed timer on `loop` that will run `action` at each deadline it is armed at.
    public init(loop: EventLoop, action: @escaping () -> Void) {
        self.loop = loop
        self.action = action
    }

    deinit {
        if let timer { loop.cancel(timer) }
    }

    /// Arms the timer at `deadline` (nil: disarms it); nothing happens when it is already armed there.
    public func arm(at deadline: Instant?) {
        if deadline == self.deadline { return }
        cancel()
        guard let deadline else { return }
        self.deadline = deadline
        timer = loop.schedule(at: deadline, fire)
    }

    /// What the loop runs at the deadline: made once, so re-arming (after every frame, the stream
    /// period restarts) allocates no closure.
    private lazy var fire: () -> Void = { [weak self] in
        guard let self else { return }
        self.timer = nil
        self.deadline = nil
        self.action()
    }

    /// Disarms the timer.
    public func cancel() {
        if let timer { loop.cancel(timer) }
        timer = nil
        deadline = nil
    }
}
