import DriveCore
import DriveLink

/// What a `Bridge` reports as it happens, on its event loop: the run's `RunViewModel` (and through
/// it the live view) is fed from here, never through the log.
public protocol BridgeObserver: AnyObject {
    /// The drive state after a control, a timer tick, a link change, a suspend or the shutdown (it
    /// may be unchanged).
    func bridge(_ bridge: Bridge, stateIs state: DriveState)
    /// `frame` was handed to the link at `time`.
    func bridge(_ bridge: Bridge, delivered frame: Frame, at time: Instant)
    /// The link is now `state` (reported before the safety frames that follow it).
    func bridge(_ bridge: Bridge, linkChanged state: LinkState)
    /// The car sent `line`.
    func bridge(_ bridge: Bridge, received line: CarLine)
    /// A notice for the driver (link up/down, an ignored Speed+, the idle timeout).
    func bridge(_ bridge: Bridge, noted text: String, at time: Instant)
    /// `control` was applied at `time` (from any input source; reported after its frames were delivered).
    func bridge(_ bridge: Bridge, applied control: Control, at time: Instant)
}

extension BridgeObserver {
    /// Not needed by the live view; the dashboard's metrics count input-lost stops with it.
    public func bridge(_ bridge: Bridge, applied control: Control, at time: Instant) {}
}
