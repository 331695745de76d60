/// Which step of a `BLETransport`'s attempt or connection is under way. The sockets, the device and the
/// write mode of the connection are the transport's own properties; the lifecycle around them (back-off,
/// flush, shutdown) is the `LinkSupervisor`'s.
enum BLETransportPhase: Hashable, Sendable {
    /// No attempt, no connection.
    case none
    /// Looking for the car among bluetoothd's devices, then by LE discovery.
    case searching
    /// `Device1.Connect` sent; waiting for it and for `ServicesResolved`.
    case connecting
    /// Connected: finding the UART characteristics, acquiring the notify (and write) sockets.
    case opening
    /// Frames go out.
    case up

    /// A connection attempt is under way.
    var isAttempting: Bool { self == .searching || self == .connecting || self == .opening }
    /// A device was picked and may be connected.
    var hasDevice: Bool { self == .connecting || self == .opening || self == .up }
}
