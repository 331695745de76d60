import DriveSystem

/// Something that runs alongside `carbridge run` on the session's event loop (the web dashboard):
/// started once the bridge and its view model exist and the signals are blocked (so threads it
/// starts never take them), before any input source or the link starts; stopped when the run ends.
/// It reaches the drive state only through the bridge, on the loop's thread.
public protocol RunSessionExtension: AnyObject {
    /// Starts (on the loop's thread); a thrown error ends the run before anything is sent.
    func start(bridge: Bridge, model: RunViewModel, loop: EventLoop) throws
    /// Stops (on the loop's thread, after the loop ended).
    func stop()
}
