/// One part of `carbridge run` (the terminal, the dashboard, the input devices, the link, systemd's
/// notifications), started and stopped by a `ServiceGroup` on the run's event loop.
///
/// The shape of swift-service-lifecycle's `Service`, on one event loop instead of structured
/// concurrency: a service starts in its group's order and stops in the reverse order, so what it
/// depends on is up before it starts and still up while it stops.
public protocol RunService: AnyObject {
    /// A short name for logs and errors, e.g. `terminal`.
    var name: String { get }
    /// Starts (on the loop's thread, before the loop runs); a thrown error ends the run before anything
    /// is sent, after the services started before this one were stopped.
    func start() throws
    /// The run begins to end while the loop still runs (a signal, `q`, the end of a replay): a last
    /// word before the engine-off frame is flushed, e.g. systemd's `STOPPING=1`. Called in reverse order.
    func shutdownBegan()
    /// Stops (on the loop's thread, after the loop ended), in reverse order; called once, and only
    /// if `start()` returned.
    func stop()
}

extension RunService {
    /// Nothing to say before the flush.
    public func shutdownBegan() {}
}
