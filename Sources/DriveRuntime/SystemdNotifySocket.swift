import DriveSystem
import Glibc

/// systemd's notification socket (`NOTIFY_SOCKET`, sd_notify(3)): each message is one datagram to the
/// AF_UNIX address systemd passed, a file system path or (with a leading `@`) an abstract name.
///
/// The protocol is one of systemd's stable interfaces, and sd_notify(3) carries a standalone
/// implementation for programs to copy instead of linking libsystemd; this is that, in Swift. Linking
/// libsystemd for two calls made every start map seven libraries (libsystemd and its compression and
/// crypto libraries); sd-bus, which BlueZ needs, loads it only when it is used (`CSDBus`).
public struct SystemdNotifySocket: Sendable {
    /// The address as systemd gave it.
    public let address: String
    private let path: [UInt8]

    /// The socket `NOTIFY_SOCKET` names, nil when it is unset or empty; throws a `CarbridgeError`
    /// for a value that is not an AF_UNIX address (systemd's `vsock:` addresses are not handled).
    public static func fromEnvironment(
        _ environment: (String) -> String? = JournalStream.environment
    ) throws -> SystemdNotifySocket? {
        guard let value = environment("NOTIFY_SOCKET"), !value.isEmpty else { return nil }
        return try SystemdNotifySocket(address: value)
    }

    /// The socket at `address`: an absolute path, or `@name` for the abstract name `name`.
    public init(address: String) throws {
        var bytes = Array(address.utf8)
        switch bytes.first {
        case UInt8(ascii: "/"): break
        case UInt8(ascii: "@"): bytes[0] = 0
        default: throw CarbridgeError("NOTIFY_SOCKET=\(address): not an absolute path or an @abstract socket name")
        }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard bytes.count <= capacity else {
            throw CarbridgeError("NOTIFY_SOCKET=\(address): longer than a socket address (\(capacity) bytes)")
        }
        self.address = address
        self.path = bytes
    }

    /// Sends `message` (e.g. `READY=1\nSTATUS=…`) as one datagram; never blocks for long (a datagram
    /// socket to PID 1, which reads it). Throws a `SystemError` when the socket cannot take it.
    public func send(_ message: String) throws(SystemError) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(call: "socket(AF_UNIX)", errno: errno) }
        defer { close(fd) }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &target.sun_path) { raw in
            for (index, byte) in path.enumerated() { raw[index] = byte }
        }
        // The address's length without a terminating NUL, as systemd's own standalone sd_notify passes it
        // (exact for an abstract name; the kernel takes a path either way).
        let length = MemoryLayout<sa_family_t>.size + path.count
        var bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                sendto(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL), address, socklen_t(length))
            }
        }
        if sent < 0 { throw SystemError(call: "sendto(NOTIFY_SOCKET \(address))", errno: errno) }
    }

    /// The watchdog timeout systemd set for this process (`WATCHDOG_USEC`, when `WATCHDOG_PID` is unset
    /// or this process's PID), as `sd_watchdog_enabled(3)` reads it; nil without one. Throws a
    /// `CarbridgeError` for a value that is not a positive number of microseconds or a PID.
    public static func watchdogTimeout(
        _ environment: (String) -> String? = JournalStream.environment, pid: pid_t = getpid()
    ) throws -> Duration? {
        guard let text = environment("WATCHDOG_USEC") else { return nil }
        guard let usec = UInt64(text), usec > 0 else {
            throw CarbridgeError("WATCHDOG_USEC=\(text): not a positive number of microseconds")
        }
        if let owner = environment("WATCHDOG_PID") {
            guard let ownerPID = pid_t(owner), ownerPID > 0 else {
                throw CarbridgeError("WATCHDOG_PID=\(owner): not a process ID")
            }
            // The watchdog is another process's (a parent that passed its environment on).
            if ownerPID != pid { return nil }
        }
        return .microseconds(Int64(clamping: usec))
    }
}
