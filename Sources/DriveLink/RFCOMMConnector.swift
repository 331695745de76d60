import CBluetooth
import DriveSystem
import CLinux
import Glibc

/// A link over BlueZ RFCOMM (an HC-05 module).
public typealias RFCOMMLink = StreamLink<RFCOMMConnector>

/// Connects an RFCOMM socket to a Bluetooth address and channel without blocking.
public struct RFCOMMConnector: StreamConnector {
    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// 1…30.
    public var channel: Int

    /// Creates a connector for `address` on `channel`.
    public init(address: String, channel: Int = LinkURL.defaultChannel) {
        self.address = address
        self.channel = channel
    }

    /// `rfcomm://ADDRESS/CHANNEL`.
    public var name: String { LinkURL.rfcomm(address: address, channel: channel).description }

    /// `socket(AF_BLUETOOTH, SOCK_STREAM, BTPROTO_RFCOMM)` and a non-blocking connect.
    public func open() throws -> (fd: Int32, progress: ConnectProgress) {
        guard LinkURL.isBluetoothAddress(address), (1...30).contains(channel) else {
            throw LinkFailure(BluetoothErrorAdvice.sentence(for: EINVAL, address: address, channel: channel))
        }
        let socketType = SocketSupport.streamSocketType
        let fd = socket(AF_BLUETOOTH, socketType, BTPROTO_RFCOMM)
        if fd < 0 { throw failure(Glibc.errno) }
        var target = sockaddr_rc()
        target.rc_family = sa_family_t(AF_BLUETOOTH)
        target.rc_channel = UInt8(channel)
        if str2ba(address, &target.rc_bdaddr) != 0 {
            Syscall.close(fd)
            throw failure(EINVAL)
        }
        let rc = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(cb_sockaddr_rc_size()))
            }
        }
        if rc == 0 { return (fd, .connected) }
        let code = Glibc.errno
        if code == EINPROGRESS || code == EAGAIN || code == EINTR { return (fd, .inProgress) }
        Syscall.close(fd)
        throw failure(code)
    }

    /// Checks SO_ERROR after the socket became writable.
    public func finishConnect(_ fd: Int32) throws {
        let code = SocketSupport.pendingError(fd)
        if code != 0 { throw failure(code) }
    }

    /// The connect took too long.
    public func connectTimeoutSentence(_ timeout: Duration) -> String {
        "the car \(address) did not answer within \(SocketSupport.secondsText(timeout)) s: is it switched on and within range?"
    }

    /// One sentence for a lost RFCOMM connection.
    public func lossSentence(_ error: SystemError) -> String {
        switch error.errno {
        case ECONNRESET, EPIPE, ENOTCONN:
            return "the car \(address) dropped the Bluetooth connection"
        case EHOSTDOWN, ETIMEDOUT:
            return "the car \(address) went out of range or was switched off"
        default:
            return "the Bluetooth connection to \(address) failed (\(SocketSupport.reason(error.errno)))"
        }
    }

    /// `send` with MSG_NOSIGNAL.
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try SocketSupport.send(fd, bytes)
    }

    /// Bytes of socket buffer memory in use. On Bluetooth sockets `TIOCOUTQ` answers the *free*
    /// space (`sk_sndbuf − sk_wmem_alloc`), so the queue is `SO_SNDBUF` minus that; it counts skb
    /// memory, not payload, so only "empty" (0) is exact.
    public func queuedBytes(_ fd: Int32) -> Int? {
        var free: Int32 = 0
        guard cb_ioctl_ptr(fd, UInt(TIOCOUTQ), &free) == 0,
              let buffer = SocketSupport.option(fd, SOL_SOCKET, SO_SNDBUF) else { return nil }
        return max(0, Int(buffer) - Int(free))
    }

    /// Buffer memory, not payload.
    public var queuedBytesArePayload: Bool { false }

    private func failure(_ code: Int32) -> LinkFailure {
        LinkFailure(BluetoothErrorAdvice.sentence(for: code, address: address, channel: channel), errno: code)
    }
}
