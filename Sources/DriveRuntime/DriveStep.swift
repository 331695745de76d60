import DriveCore

/// One step of the drive machine as the run tells it (`RunEvent.step`): what caused it, the frames the
/// bridge handed to the link, and the drive state it left.
public struct DriveStep: Sendable {
    /// The control applied (from any input source); nil for a timer tick, a link change, a suspend or the
    /// shutdown.
    public var control: Control?
    /// The frames handed to the link, in order (none while the link is down).
    public var frames: FrameBatch
    /// The drive state after the step (it may be unchanged).
    public var state: DriveState
    /// When the step happened (the frames' time).
    public var time: Instant
    /// What turned the engine off in this step when a timer did it (the idle timeout, a kiosk turn's end).
    public var timedStop: DriveMachine.TimedStop?

    /// A step at `time`.
    public init(
        control: Control? = nil, frames: FrameBatch = FrameBatch(), state: DriveState, time: Instant,
        timedStop: DriveMachine.TimedStop? = nil
    ) {
        self.timedStop = timedStop
        self.control = control
        self.frames = frames
        self.state = state
        self.time = time
    }
}
