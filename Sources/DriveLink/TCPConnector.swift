import CBluetooth  // owns <netinet/in.h>'s IPPROTO_TCP in this target (as in StreamConnector.swift)
import CLinux
import DriveSystem
import Glibc

/// A link over TCP (a networked car or `carbridge car-sim`).
public typealias TCPLink = StreamLink<TCPConnector>

/// Connects to HOST:PORT over TCP without blocking, with TCP_NODELAY.
///
/// A numeric address needs no lookup. A name is resolved with `getaddrinfo` on a helper thread
/// (`prepare`), which can take seconds when the DNS server is unreachable; the result comes back
/// through `EventLoop.submit`, so the loop keeps streaming and firing timers meanwhile. At most one
/// resolution runs at a time: an attempt that starts while an earlier one is still resolving (its
/// attempt timed out) waits for that one instead of starting another thread.
///
/// When a name has several addresses (`localhost` → ::1 and 127.0.0.1), each attempt takes the
/// next one, so a car listening on only one of them is still found.
public final class TCPConnector: StreamConnector {
    /// Resolves a host and port (blocking; runs on a helper thread); throws `LinkFailure`.
    public typealias Resolver = @Sendable (_ host: String, _ port: Int) throws -> [ResolvedAddress]

    /// The host name or address.
    public let host: String
    /// The port.
    public let port: Int
    /// How names are resolved (`getaddrinfo`); tests inject a slow one.
    public var resolver: Resolver = { host, port in try SocketSupport.resolve(host: host, port: port) }
    /// True while a helper thread resolves the host.
    public private(set) var isResolving = false
    /// How many helper threads were started to resolve the host.
    public private(set) var resolutionsStarted = 0
    private var attempt = 0
    private var addresses: [ResolvedAddress] = []
    private var resolutionWaiter: ((LinkFailure?) -> Void)?

    /// Creates a connector for `host:port`.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `tcp://HOST:PORT`.
    public var name: String { LinkURL.tcp(host: host, port: port).description }

    /// A numeric host is resolved at once (returns false); a name on a helper thread (returns true,
    /// `done` follows on the loop's thread).
    public func prepare(on loop: EventLoop, then done: @escaping (LinkFailure?) -> Void) -> Bool {
        if let numeric = SocketSupport.resolveNumeric(host: host, port: port) {
            addresses = numeric
            return false
        }
        addresses = []
        resolutionWaiter = done
        if isResolving { return true }  // the resolution under way answers this attempt
        isResolving = true
        resolutionsStarted += 1
        let resolver = self.resolver
        let (host, port) = (self.host, self.port)
        let submitter = loop.submitter
        let connector = LoopBound(self)
        do {
            try BackgroundThread.start {
                let result: Result<[ResolvedAddress], LinkFailure>
                do {
                    result = .success(try resolver(host, port))
                } catch let failure as LinkFailure {
                    result = .failure(failure)
                } catch {
                    result = .failure(LinkFailure("cannot resolve host \"\(host)\" (\(error))"))
                }
                submitter.submit { connector.value.resolutionFinished(result) }
            }
        } catch {
            isResolving = false
            resolutionWaiter = nil
            loop.execute { done(LinkFailure("cannot start resolving host \"\(host)\" (\(error))")) }
        }
        return true
    }

    private func resolutionFinished(_ result: Result<[ResolvedAddress], LinkFailure>) {
        isResolving = false
        let waiter = resolutionWaiter
        resolutionWaiter = nil
        switch result {
        case .success(let list) where list.isEmpty:
            waiter?(LinkFailure("host \"\(host)\" has no address: check the name or use a numeric address"))
        case .success(let list):
            addresses = list
            waiter?(nil)
        case .failure(let failure):
            waiter?(failure)
        }
    }

    /// While a resolution is under way: the DNS server did not answer in time.
    public func connectTimeoutSentence(_ timeout: Duration) -> String {
        if isResolving {
            return "host \"\(host)\" could not be resolved within \(SocketSupport.secondsText(timeout)) s: check the DNS server and the network, or use a numeric address"
        }
        return "no answer from \(name) within \(SocketSupport.secondsText(timeout)) s: check that the car is on and reachable"
    }

    /// Opens a socket and starts a non-blocking connect to the next of the addresses `prepare`
    /// found (without `prepare`, resolves here, blocking).
    public func open() throws -> (fd: Int32, progress: ConnectProgress) {
        if addresses.isEmpty { addresses = try resolver(host, port) }
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

    /// A small send buffer (frames are bytes, a big buffer only hides a dead link),
    /// `TCP_USER_TIMEOUT` at twice the stall timeout, a backstop for the stall detector, and
    /// linear retransmission timeouts, so a radio blip is not a drop.
    ///
    /// Why: the stream is thin (at most `max_in_flight` frames unacknowledged), so a segment lost
    /// in a blip is only recovered by the retransmission timer, which doubles at each try (0.2,
    /// 0.6, 1.4 s after the loss): after a 0.3 s outage the stream came back 0.31-0.36 s after the
    /// radio, after a 0.6 s one sometimes only past the stall timeout. `TCP_THIN_LINEAR_TIMEOUTS`
    /// keeps the timer at one RTO (about 0.2 s) for six tries, but only for a stream the kernel
    /// counts as thin (`tcp_stream_is_thin`: out of initial slow start), which a BBR socket (the
    /// default congestion control on many systems) never is, as BBR keeps ssthresh infinite; so
    /// the socket uses Reno, which every system allows and which costs nothing at a few hundred
    /// bytes a second.
    public func tune(_ fd: Int32, options: LinkOptions) {
        SocketSupport.setOption(fd, SOL_SOCKET, SO_SNDBUF, 4096)
        let userTimeout = max(options.stallTimeout.nanoseconds / 1_000_000 * 2, 1000)
        SocketSupport.setTCPUserTimeout(fd, milliseconds: Int32(clamping: userTimeout))
        SocketSupport.setCongestionControl(fd, "reno")
        SocketSupport.setOption(fd, Int32(IPPROTO_TCP), TCP_THIN_LINEAR_TIMEOUTS, 1)
    }

    /// Sends FIN after the queued data.
    public func prepareClose(_ fd: Int32) { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
}
