/// How long a run waits while it stops, in one place (like swift-service-lifecycle's
/// `ServiceGroupConfiguration` and its graceful-shutdown/cancellation timeouts).
public struct ShutdownConfiguration: Sendable, Equatable {
    /// A clean stop (q, SIGINT, SIGTERM, SIGHUP, SIGQUIT, end of a replay): the engine-off frame is
    /// flushed to the car within this before the link is closed.
    public var flushWindow: Duration = .seconds(1)
    /// A clean stop never hangs on a stuck link: the loop stops after this (the flush window and a
    /// margin) whatever the link did.
    public var hardStop: Duration = .seconds(3)
    /// Job control (SIGTSTP, SIGTTIN, SIGTTOU): the stop frame is flushed within this before the
    /// process really stops.
    public var suspendFlush: Duration = .milliseconds(500)

    /// The defaults above.
    public init() {}
}
