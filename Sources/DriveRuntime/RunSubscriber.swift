/// One of the run's subscribers (the view model, the feedback, the live view, the dashboard, systemd's
/// status, the input mapping's view of the drive state): told every `RunEvent`, on the run's event loop.
public protocol RunSubscriber: AnyObject {
    /// `event` happened; called on the loop's thread, in the order the subscribers were added.
    func receive(_ event: RunEvent)
}
