/// Where a `BLELink` stands. The sockets, the device and the write mode of the connection are the link's
/// own properties; this says which of its steps is under way.
enum BLELinkPhase: Hashable, Sendable {
    /// Not started.
    case idle
    /// Looking for the car among bluetoothd's devices, then by LE discovery.
    case searching
    /// `Device1.Connect` sent; waiting for it and for `ServicesResolved`.
    case connecting
    /// Connected: finding the UART characteristics, acquiring the notify (and write) sockets.
    case opening
    /// Frames go out.
    case up
    /// Waiting to reconnect after a loss or a failed attempt.
    case backingOff
    /// Shutting down: flushing what is queued, then disconnecting.
    case closing
    /// Shut down for good.
    case closed

    /// A connection attempt is under way.
    var isAttempting: Bool { self == .searching || self == .connecting || self == .opening }
    /// Frames (already queued ones, while closing) are written.
    var isWriting: Bool { self == .up || self == .closing }
    /// A device was picked and may be connected.
    var hasDevice: Bool { self == .connecting || self == .opening || self == .up || self == .closing }
}
