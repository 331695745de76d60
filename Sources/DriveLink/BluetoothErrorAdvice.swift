import Glibc

/// Turns an RFCOMM errno into one clear sentence that says what to do (never a bare errno).
public enum BluetoothErrorAdvice {
    /// Linux's ERFKILL (operation not possible due to RF-kill).
    public static let rfkillErrno: Int32 = 132

    /// The sentence for `code` from socket() or connect() to `address` on `channel`.
    public static func sentence(for code: Int32, address: String, channel: Int) -> String {
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT:
            return "this kernel has no Bluetooth RFCOMM support: load it with `sudo modprobe bluetooth rfcomm`, "
                + "or use serial:///dev/rfcomm0 or tcp://HOST:PORT instead"
        case EHOSTUNREACH, ENODEV, EADDRNOTAVAIL:
            return "no Bluetooth adapter is up: check `bluetoothctl list`, `rfkill unblock bluetooth`, `bluetoothctl power on`"
        case ENETDOWN:
            return "the Bluetooth adapter is down: switch it on with `bluetoothctl power on`"
        case rfkillErrno:
            return "Bluetooth is blocked by rfkill: run `rfkill unblock bluetooth`, then `bluetoothctl power on`"
        case EHOSTDOWN, ETIMEDOUT:
            return "the car \(address) does not answer: is it switched on and within range?"
        case ECONNREFUSED:
            return "the car \(address) has no serial (SPP) service on channel \(channel): "
                + "try another channel, e.g. rfcomm://\(address)/\(channel == 1 ? 2 : 1)"
        case EACCES, EPERM, ECONNRESET:
            return "the car \(address) rejected the connection (not paired, or wrong PIN): "
                + "pair it with `bluetoothctl pair \(address)` (the PIN is usually 1234 or 0000)"
        case EBUSY, EADDRINUSE:
            return "channel \(channel) of \(address) is in use: right after a lost connection that is carbridge's own "
                + "old connection still closing (it retries by itself); otherwise release it (`sudo rfcomm release all`) "
                + "or close the program holding it"
        case EINVAL:
            return "\"\(address)\" channel \(channel) is not a valid Bluetooth target: check the address"
        default:
            return "connecting to the car \(address) over Bluetooth failed (\(SocketSupport.reason(code))): "
                + "check that it is paired, switched on and within range"
        }
    }
}
