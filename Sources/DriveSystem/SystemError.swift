import Glibc

/// A failed system call: which call, and its errno.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `connect` or `open /dev/input/event3`.
    public var call: String
    /// The errno it left.
    public var errno: Int32

    /// Creates an error for `call` with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for the errno, e.g. "Connection refused".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(call): \(reason) (errno \(errno))" }
}
