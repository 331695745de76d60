import DriveSystem

/// Where a run's signals come from: the process's own (a signalfd on the event loop) or, in tests,
/// signals the test delivers by hand on the loop's thread.
public protocol SignalSource: AnyObject {
    /// Delivers `signals` to `handler` on the loop's thread from now on (the set replaces the one
    /// watched before; `handler` replaces the previous handler).
    func watch(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws
}

/// The process's signals through the event loop's signalfd (`EventLoop.watchSignals`): blocked for
/// the calling thread (call it before other threads exist) and read on the loop.
public final class ProcessSignals: SignalSource {
    private let loop: EventLoop

    /// Signals read on `loop`.
    public init(loop: EventLoop) { self.loop = loop }

    public func watch(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        try loop.watchSignals(signals, handler)
    }
}
