import CLinux
import Glibc

/// Wrappers that run a system call, retry it on `EINTR`, and throw a typed `SystemError`.
///
/// As in swift-nio, an errno only a bug can cause is not an error to handle but a broken
/// precondition, and stops the process with the call's name: `EFAULT` (a bad pointer) and `EBADF`
/// (an fd that is not open: closed twice, used after close, never opened) from every call, and
/// `EINVAL` from the calls where it can only mean bad arguments (`forbiddingEINVAL`: the fixed-flag
/// creators like `epoll_create1`/`eventfd`/`timerfd_create`/`pipe`, `epoll_ctl`, `fcntl` with a
/// fixed command). `EINVAL` stays a thrown error for calls where the kernel or a device can give it
/// (`read`/`write` on some files, `ioctl`, `connect`, `tcsetattr` with an unsupported speed).
/// One exception: `EBADF` on fds 0, 1 and 2 is thrown, since a process can be started with its
/// standard input, output or error closed (`carbridge list >&-`).
public enum Syscall {
    /// Runs `body` until it does not fail with EINTR; throws `SystemError(call:errno:)` when it returns -1
    /// (a programmer error's errno is a `preconditionFailure`, see above). `fd`: the fd the call is on,
    /// when there is one (for the standard-fd exception).
    @discardableResult @inlinable
    public static func retrying<T: FixedWidthInteger>(
        _ call: @autoclosure () -> String, fd: Int32? = nil, forbiddingEINVAL: Bool = false, _ body: () -> T
    ) throws -> T {
        while true {
            let result = body()
            if result == -1 {
                let code = Glibc.errno
                if code == EINTR { continue }
                try check(code, call(), fd: fd, forbiddingEINVAL: forbiddingEINVAL)
            }
            return result
        }
    }

    /// Like `retrying`, but returns nil for EAGAIN/EWOULDBLOCK (a non-blocking fd with nothing to do).
    @inlinable
    public static func nonBlocking<T: FixedWidthInteger>(
        _ call: @autoclosure () -> String, fd: Int32? = nil, _ body: () -> T
    ) throws -> T? {
        while true {
            let result = body()
            if result == -1 {
                let code = Glibc.errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return nil }
                try check(code, call(), fd: fd)
            }
            return result
        }
    }

    /// True when `code` from a call on `fd` (nil: unknown or none) can only be a bug.
    public static func isProgrammerError(_ code: Int32, fd: Int32? = nil, forbiddingEINVAL: Bool = false) -> Bool {
        switch code {
        case EFAULT: return true
        case EBADF:
            if let fd, (0...2).contains(fd) { return false }  // a standard fd the process was started without
            return true
        case EINVAL: return forbiddingEINVAL
        default: return false
        }
    }

    /// Throws `SystemError(call:errno:)` for `code`, or stops the process when it is a programmer error.
    @usableFromInline
    static func check(_ code: Int32, _ call: @autoclosure () -> String, fd: Int32? = nil, forbiddingEINVAL: Bool = false) throws -> Never {
        let error = SystemError(call: call(), errno: code)
        if isProgrammerError(code, fd: fd, forbiddingEINVAL: forbiddingEINVAL) {
            preconditionFailure("programmer error: \(error)")
        }
        throw error
    }

    /// `read(2)` into `buffer`; nil when it would block, 0 at end of file.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        try nonBlocking("read", fd: fd) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `write(2)` from `bytes`; nil when it would block, else the count written.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try nonBlocking("write", fd: fd) { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes` to a blocking fd (retries partial writes and EINTR).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try bytes.withUnsafeBytes { raw in
                try retrying("write", fd: fd) { Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset) }
            }
            offset += n
        }
    }

    /// Sets or clears `O_NONBLOCK` on `fd`.
    public static func setNonBlocking(_ fd: Int32, _ on: Bool = true) throws {
        let flags = try retrying("fcntl(F_GETFL)", fd: fd, forbiddingEINVAL: true) { cb_fcntl_get(fd, F_GETFL) }
        let wanted = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK)
        if wanted != flags {
            try retrying("fcntl(F_SETFL)", fd: fd, forbiddingEINVAL: true) { cb_fcntl_set(fd, F_SETFL, wanted) }
        }
    }

    /// Sets `FD_CLOEXEC` on `fd`.
    public static func setCloseOnExec(_ fd: Int32) throws {
        let flags = try retrying("fcntl(F_GETFD)", fd: fd, forbiddingEINVAL: true) { cb_fcntl_get(fd, F_GETFD) }
        try retrying("fcntl(F_SETFD)", fd: fd, forbiddingEINVAL: true) { cb_fcntl_set(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Closes `fd` (negative: nothing to close). EINTR and EIO are ignored (Linux has closed the fd
    /// by then); EBADF, an fd closed twice, is a programmer error (it may have closed someone else's fd).
    public static func close(_ fd: Int32) {
        guard fd >= 0, Glibc.close(fd) == -1 else { return }
        let code = Glibc.errno
        if code == EBADF, fd > 2 { preconditionFailure("programmer error: close(\(fd)): fd not open (closed twice?)") }
    }

    /// Creates a pipe with both ends non-blocking and close-on-exec: (read end, write end).
    public static func pipe(nonBlocking: Bool = true) throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try retrying("pipe", forbiddingEINVAL: true) { Glibc.pipe(&fds) }
        for fd in fds {
            try setCloseOnExec(fd)
            if nonBlocking { try setNonBlocking(fd) }
        }
        return (fds[0], fds[1])
    }
}
