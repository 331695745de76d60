import DriveCore

/// What the control mapper produces: a control for the drive machine, or a request to calibrate.
public enum MappedEvent: Hashable, Sendable {
    /// Feed this to `DriveMachine.handle`.
    case control(Control)
    /// The `calibrate` button fired: the tilt's current roll became straight ahead and a tilt throttle's
    /// pitch standing still (the mapper already applied them; persist `ControlMapper.tiltNeutrals` if wanted).
    case calibrate
}
