import DriveCore

/// One loop timer that follows a pure object's `nextDeadline`: `arm(at:)` after every step re-schedules
/// it only when the deadline changed, and `arm(at: nil)` (or `cancel()`) takes it off the loop.
///
/// `action` runs at the deadline; by then the timer is disarmed (`deadline` is nil), so the action
/// re-arms it at the object's new deadline. The action is kept by the timer, and never runs once the timer
/// is gone (its `deinit` takes it off the loop): an owner that keeps its timer captures itself `unowned`.
///
/// A deadline that moves later leaves the loop's timer where it is: it fires early once, finds the
/// deadline still ahead and moves there. The stream period restarts with every frame, so this keeps a
/// deadline that moves after every report from rescheduling on the loop each time. An earlier deadline
/// re-schedules at once.
public final class DeadlineTimer {
    private let loop: EventLoop
    private var action: () -> Void
    private var timer: EventLoop.TimerID?
    /// When the loop's timer is due (nil: none is scheduled): `deadline` or earlier, never later.
    private var scheduled: Instant?
    /// The instant the timer is armed at; nil when it is not armed.
    public private(set) var deadline: Instant?
    /// What the loop runs when the timer is due, made once so that scheduling allocates no closure.
    private var fire: () -> Void = {}

    /// A disarmed timer on `loop` that will run `action` at each deadline it is armed at.
    public init(loop: EventLoop, action: @escaping () -> Void) {
        self.loop = loop
        self.action = action
        // The loop keeps `fire` only while the timer is scheduled, and `deinit` cancels it.
        fire = { [unowned self] in self.due() }
    }

    /// A disarmed timer on `loop` that does nothing until `setAction`: for an owner that creates its timer
    /// before it can capture itself.
    public convenience init(loop: EventLoop) {
        self.init(loop: loop, action: {})
    }

    /// Sets what runs at each deadline from now on.
    public func setAction(_ action: @escaping () -> Void) {
        self.action = action
    }

    deinit {
        if let timer { loop.cancel(timer) }
    }

    /// Arms the timer at `deadline` (nil: disarms it); nothing happens when it is already armed there.
    public func arm(at deadline: Instant?) {
        if deadline == self.deadline { return }
        guard let deadline else { return cancel() }
        self.deadline = deadline
        if let scheduled, scheduled <= deadline { return }
        if let timer { loop.cancel(timer) }
        scheduled = deadline
        timer = loop.schedule(at: deadline, fire)
    }

    /// The loop's timer is due: the action runs when the deadline has come, else the timer moves on to it.
    private func due() {
        timer = nil
        scheduled = nil
        guard let deadline else { return }
        // The loop fires what is due by this turn's instant; the same instant decides here.
        if deadline > loop.now() {
            scheduled = deadline
            timer = loop.schedule(at: deadline, fire)
            return
        }
        self.deadline = nil
        action()
    }

    /// Disarms the timer.
    public func cancel() {
        if let timer { loop.cancel(timer) }
        timer = nil
        scheduled = nil
        deadline = nil
    }
}
