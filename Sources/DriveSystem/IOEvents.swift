import CLinux
import Glibc

/// The readiness an fd is watched for, or reported with.
public struct IOEvents: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data can be read (or a listening socket can accept).
    public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
    /// Data can be written (or a non-blocking connect finished).
    public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
    /// The peer hung up (reported, never asked for).
    public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue)
    /// An error is pending on the fd (reported, never asked for).
    public static let error = IOEvents(rawValue: EPOLLERR.rawValue)
    /// The peer shut down its writing side.
    public static let readHangup = IOEvents(rawValue: EPOLLRDHUP.rawValue)
}
