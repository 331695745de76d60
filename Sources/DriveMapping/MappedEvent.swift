import DriveCore

/// What the control mapper produces: a control for the drive machine, or a request to calibrate.
public enum MappedEvent: Hashable, Sendable {
    /// Feed this to `DriveMachine.handle`.
    case control(Control)
    /// The `calibrate` button fired: the tilt's current roll became straight ahead
    /// (the mapper already applied it; persist `ControlMapper.tiltNeutralDegrees` if wanted).
    case calibrate
}
