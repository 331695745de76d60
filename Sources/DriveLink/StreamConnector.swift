import CBluetooth  // owns the <sys/socket.h> declarations (SOCK_*) in this target
import DriveSystem
import CLinux
import Glibc

/// How far `StreamConnector.open()` got.
public enum ConnectProgress: Hashable, Sendable {
    /// The fd is ready for I/O.
    case connected
    /// A non-blocking connect is under way: wait for writable, then `finishConnect`.
    case inProgress
}

/// What a `StreamLink` needs to know about one kind of byte stream (TCP, RFCOMM, serial, socketpair).
public protocol StreamConnector {
    /// A short name for logs, e.g. `tcp://127.0.0.1:9000`.
    var name: String { get }
    /// An optional first step of a connect that may take long (host name resolution) and so must
    /// not run on the loop: returns false when there is nothing to do and `open()` may follow at
    /// once (the default); true when it is under way, and then `done` is called later on the loop's
    /// thread, with nil when `open()` may follow, or with the failure. The link's connect timeout
    /// covers this step; a `done` that comes after the attempt was given up is ignored by the link.
    func prepare(on loop: EventLoop, then done: @escaping (LinkFailure?) -> Void) -> Bool
    /// Opens a non-blocking, close-on-exec fd and starts connecting; throws `LinkFailure`.
    func open() throws -> (fd: Int32, progress: ConnectProgress)
    /// Called once the fd became writable during a connect: checks the result (SO_ERROR); throws `LinkFailure`.
    func finishConnect(_ fd: Int32) throws
    /// One sentence for a connect that took longer than `timeout`.
    func connectTimeoutSentence(_ timeout: Duration) -> String
    /// One sentence for an I/O error after the link was up.
    func lossSentence(_ error: SystemError) -> String
    /// Writes bytes without blocking: nil when it would block.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int?
    /// How much the kernel still holds of what was written (its output queue), nil when it cannot tell.
    func queuedBytes(_ fd: Int32) -> Int?
    /// True when `queuedBytes` counts payload bytes exactly (TCP, ttys), so it tells how many frames
    /// are still queued; false when it counts buffer memory (RFCOMM, AF_UNIX), so only "empty" is exact.
    var queuedBytesArePayload: Bool { get }
    /// Sets socket options once connected (small send buffer, a user timeout as a stall backstop).
    func tune(_ fd: Int32, options: LinkOptions)
    /// Last step before `close` at shutdown, after the flush (e.g. send FIN, discard tty output).
    func prepareClose(_ fd: Int32)
    /// Last step before `close` when the link is lost: make sure nothing still queued is delivered
    /// later (`SO_LINGER` {1, 0} resets a socket; `tcflush(TCOFLUSH)` empties a tty).
    func prepareAbort(_ fd: Int32)
}

extension StreamConnector {
    /// Default: nothing to prepare.
    public func prepare(on loop: EventLoop, then done: @escaping (LinkFailure?) -> Void) -> Bool { false }

    /// Default: "no answer from NAME within N s".
    public func connectTimeoutSentence(_ timeout: Duration) -> String {
        "no answer from \(name) within \(SocketSupport.secondsText(timeout)) s: check that the car is on and reachable"
    }

    /// Default: `write(2)`.
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try Syscall.write(fd, bytes)
    }

    /// Default: `TIOCOUTQ` (the same request as `SIOCOUTQ` on sockets): bytes not yet sent (ttys)
    /// or not yet acknowledged (TCP).
    public func queuedBytes(_ fd: Int32) -> Int? {
        var count: Int32 = 0
        return cb_ioctl_ptr(fd, UInt(TIOCOUTQ), &count) == 0 ? Int(count) : nil
    }

    /// Default: payload bytes.
    public var queuedBytesArePayload: Bool { true }

    /// Default: nothing.
    public func tune(_ fd: Int32, options: LinkOptions) {}

    /// Default: nothing.
    public func prepareClose(_ fd: Int32) {}

    /// Default: `SO_LINGER` {1, 0}, so `close` resets the connection and drops its queue.
    public func prepareAbort(_ fd: Int32) { SocketSupport.setAbortiveClose(fd) }
}

/// Socket helpers shared by the connectors and the car simulator.
public enum SocketSupport {
    /// `SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC`, for socket(2) and socketpair(2).
    public static let streamSocketType =
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    /// `SOCK_STREAM`, for getaddrinfo hints.
    public static let streamType = Int32(SOCK_STREAM.rawValue)

    /// The pending error of a socket whose non-blocking connect finished (SO_ERROR), 0 when connected.
    public static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) != 0 { return Glibc.errno }
        return value
    }

    /// `send(2)` with MSG_NOSIGNAL (no SIGPIPE when the peer is gone); nil when it would block.
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try Syscall.nonBlocking("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// `SO_LINGER` {1, 0}: the next `close` sends RST and discards whatever the kernel still queues.
    public static func setAbortiveClose(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Sets an integer socket option, ignoring failure (the option is a refinement, not a need).
    public static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// An integer socket option, nil when it cannot be read.
    public static func option(_ fd: Int32, _ level: Int32, _ name: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, level, name, &value, &length) == 0 ? value : nil
    }

    /// `TCP_USER_TIMEOUT`: the kernel drops a connection whose data stays unacknowledged this long.
    public static func setTCPUserTimeout(_ fd: Int32, milliseconds: Int32) {
        setOption(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, milliseconds)
    }

    /// `TCP_CONGESTION`: the congestion control algorithm, ignoring failure (one not allowed keeps the default).
    public static func setCongestionControl(_ fd: Int32, _ name: String) {
        var bytes = Array(name.utf8)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CONGESTION, &bytes, socklen_t(bytes.count))
    }

    /// Turns off Nagle's algorithm: a frame goes out at once.
    public static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// "5" for 5 s, "0.5" for 500 ms.
    public static func secondsText(_ duration: Duration) -> String {
        let ms = duration.nanoseconds / 1_000_000
        if ms % 1000 == 0 { return "\(ms / 1000)" }
        let tenths = ms / 100
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// The C library's text for an errno, lower-cased first letter: "connection refused".
    public static func reason(_ code: Int32) -> String {
        var text = String(cString: strerror(code))
        if let first = text.first { text = first.lowercased() + text.dropFirst() }
        return text
    }

    /// "HOST:PORT" for an IPv4/IPv6 socket address.
    public static func describe(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let rc = getnameinfo(
            address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
            NI_NUMERICHOST | NI_NUMERICSERV)
        guard rc == 0 else { return "?" }
        let hostText = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let serviceText = service.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return hostText.contains(":") ? "[\(hostText)]:\(serviceText)" : "\(hostText):\(serviceText)"
    }

    /// The address `fd` is bound to (`getsockname(2)`): a listener's port after binding port 0.
    public static func localAddress(of fd: Int32) -> ResolvedAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        return ResolvedAddress(family: Int32(storage.ss_family), storage: storage, length: length)
    }

    /// Accepts one pending connection on the non-blocking listener `listenFD`: the new fd (non-blocking,
    /// close-on-exec, no Nagle) and the peer's address; nil when none is pending. A connection the peer
    /// gave up while it was queued (`ECONNABORTED`) is skipped; any other failure is thrown.
    public static func accept(_ listenFD: Int32) throws -> (fd: Int32, peer: ResolvedAddress)? {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listenFD, $0, &length) }
            }
            if fd < 0 {
                let code = Glibc.errno
                if code == EINTR || code == ECONNABORTED { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return nil }
                throw SystemError(call: "accept", errno: code)
            }
            try? Syscall.setNonBlocking(fd)
            try? Syscall.setCloseOnExec(fd)
            setNoDelay(fd)
            return (fd, ResolvedAddress(family: Int32(storage.ss_family), storage: storage, length: length))
        }
    }

    /// `host`/`port` when the host is a numeric address (`127.0.0.1`, `::1`): no lookup, never
    /// blocks. Nil for a name.
    public static func resolveNumeric(host: String, port: Int) -> [ResolvedAddress]? {
        try? resolve(host: host, port: port, numericOnly: true)
    }

    /// Resolves `host`/`port` for a stream socket (numeric addresses or names); throws `LinkFailure`.
    /// A name may take seconds (an unreachable DNS server): call it off the event loop's thread.
    public static func resolve(
        host: String, port: Int, passive: Bool = false, numericOnly: Bool = false
    ) throws -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) | (numericOnly ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            let why = rc == EAI_SYSTEM ? reason(Glibc.errno) : String(cString: gai_strerror(rc))
            throw LinkFailure("cannot resolve host \"\(host)\" (\(why)): check the name or use a numeric address")
        }
        defer { freeaddrinfo(list) }
        var result: [ResolvedAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = info.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = info.pointee.ai_addrlen
                withUnsafeMutableBytes(of: &storage) { raw in
                    raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
                }
                result.append(ResolvedAddress(family: info.pointee.ai_family, storage: storage, length: length))
            }
            cursor = info.pointee.ai_next
        }
        return result
    }
}

/// One IPv4 or IPv6 socket address, copied out (from `getaddrinfo`, `getsockname` or `accept`).
public struct ResolvedAddress: Sendable {
    /// AF_INET or AF_INET6.
    public var family: Int32
    /// The socket address.
    public var storage: sockaddr_storage
    /// Its length.
    public var length: socklen_t

    /// Calls `body` with the address as a `sockaddr` pointer.
    public func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// "HOST:PORT".
    public var text: String { withSockaddr { SocketSupport.describe($0, $1) } }

    /// The port (0 for an address of another family).
    public var port: Int {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET: return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
            case AF_INET6: return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            default: return 0
            }
        }
    }
}
