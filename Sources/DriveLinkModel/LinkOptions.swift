/// The tunables of a link to the car (`[link]` in the config).
public struct LinkOptions: Hashable, Sendable {
    /// How long one connection attempt may take.
    public var connectTimeout: Duration
    /// At most this many motion frames are handed to the kernel's output queue at once (protocol §5.6);
    /// a newer motion frame waits in the coalescing slot until the queue drains.
    public var maxInFlight: Int
    /// A kernel output queue that does not shrink for this long means the link is down (protocol §6).
    public var stallTimeout: Duration
    /// A BLE link's UART profile when the car's module is none of `BLEUARTProfile.known`
    /// (`[link] ble_service`, `ble_write`, `ble_notify`); nil: recognise the module from its services.
    public var bleProfile: BLEUARTProfile?

    /// Creates options; the defaults are the config's.
    public init(
        connectTimeout: Duration = .seconds(5), maxInFlight: Int = 2, stallTimeout: Duration = .seconds(1),
        bleProfile: BLEUARTProfile? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.maxInFlight = maxInFlight
        self.stallTimeout = stallTimeout
        self.bleProfile = bleProfile
    }
}
