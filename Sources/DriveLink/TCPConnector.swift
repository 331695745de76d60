import DriveSystem
import Glibc

/// A link over TCP (a networked car or `carbridge car-sim`).
public typealias TCPLink = StreamLink<TCPConnector>

/// Connects to HOST:PORT over TCP without blocking (names resolved with getaddrinfo), with TCP_NODELAY.
///
/// When a name has several addresses (`localhost` → ::1 and 127.0.0.1), each attempt takes the
/// next one, so a car listening on only one of them is still found.
public final class TCPConnector: StreamConnector {
    /// The host name or address.
    public let host: String
    /// The port.
    public let port: Int
    private var attempt = 0

    /// Creates a connector for `host:port`.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `tcp://HOST:PORT`.
    public var name: String { LinkURL.tcp(host: host, port: port).description }

    /// Resolves the host, opens a socket and starts a non-blocking connect to its first address.
    public func open() throws -> (fd: Int32, progress: ConnectProgress) {
        let addresses = try SocketSupport.resolve(host: host, port: port)
        guard !addresses.isEmpty else {
            throw LinkFailure("host \"\(host)\" has no address: check the name or use a numeric address")
        }
        let address = addresses[attempt % addresses.count]
        attempt += 1
        let socketType = SocketSupport.streamSocketType
        let fd = socket(address.family, socketType, 0)
        if fd < 0 { throw LinkFailure(advice(for: Glibc.errno), errno: Glibc.errno) }
        SocketSupport.setNoDelay(fd)
        let rc = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if rc == 0 { return (fd, .connected) }
        let code = Glibc.errno
        if code == EINPROGRESS || code == EINTR { return (fd, .inProgress) }
        Syscall.close(fd)
        throw LinkFailure(advice(for: code), errno: code)
    }

    /// Checks SO_ERROR after the socket became writable.
    public func finishConnect(_ fd: Int32) throws {
        let code = SocketSupport.pendingError(fd)
        if code != 0 { throw LinkFailure(advice(for: code), errno: code) }
    }

    /// One sentence for a failed connect.
    public func advice(for code: Int32) -> String {
        let target = "\(host):\(port)"
        switch code {
        case ECONNREFUSED:
            return "nothing is listening on \(target) (connection refused): start the car or `carbridge car-sim`, or fix the address"
        case ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENETDOWN:
            return "\(target) cannot be reached (\(SocketSupport.reason(code))): check the network and the address"
        default:
            return "connecting to \(target) failed (\(SocketSupport.reason(code))): check the address and that the car is reachable"
        }
    }

    /// One sentence for a lost connection.
    public func lossSentence(_ error: SystemError) -> String {
        switch error.errno {
        case ECONNRESET: return "the car reset the connection (\(name))"
        case EPIPE: return "the car closed the connection (\(name))"
        case ETIMEDOUT: return "the connection to \(name) timed out"
        default: return "the connection to \(name) failed (\(SocketSupport.reason(error.errno)))"
        }
    }

    /// `send` with MSG_NOSIGNAL.
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try SocketSupport.send(fd, bytes)
    }

    /// A small send buffer (frames are bytes, a big buffer only hides a dead link) and
    /// `TCP_USER_TIMEOUT` at twice the stall timeout, a backstop for the stall detector.
    public func tune(_ fd: Int32, options: LinkOptions) {
        SocketSupport.setOption(fd, SOL_SOCKET, SO_SNDBUF, 4096)
        let userTimeout = max(options.stallTimeout.nanoseconds / 1_000_000 * 2, 1000)
        SocketSupport.setTCPUserTimeout(fd, milliseconds: Int32(clamping: userTimeout))
    }

    /// Sends FIN after the queued data.
    public func prepareClose(_ fd: Int32) { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
}
