import DriveCore

/// What an input or a view of the run may do to it: apply a control and tell the driver something, and
/// hear and publish the run's events. Nothing it can read back: the drive state, the link's state and its
/// statistics reach it only as events (`RunEvent`). The bridge is the one implementation; the dashboard's
/// loop side holds only this.
public protocol DrivePort: AnyObject {
    /// Applies `control` (on the loop's thread).
    func apply(_ control: Control)
    /// Tells the driver `text` (a notice event and a log line).
    func note(_ text: String)
    /// The run's events: what happened, and where an input publishes what it found.
    var events: RunEvents { get }
}

extension Bridge: DrivePort {}
