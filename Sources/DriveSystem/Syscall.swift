import Glibc

/// Wrappers that run a system call, retry it on `EINTR`, and throw a typed `SystemError`.
public enum Syscall {
    /// Runs `body` until it does not fail with EINTR; throws `SystemError(call:errno:)` when it returns -1.
    @discardableResult
    public static func retrying<T: FixedWidthInteger>(_ call: @autoclosure () -> String, _ body: () -> T) throws -> T {
        while true {
            let result = body()
            if result == -1 {
                let code = Glibc.errno
                if code == EINTR { continue }
                throw SystemError(call: call(), errno: code)
            }
            return result
        }
    }

    /// Like `retrying`, but returns nil for EAGAIN/EWOULDBLOCK (a non-blocking fd with nothing to do).
    public static func nonBlocking<T: FixedWidthInteger>(_ call: @autoclosure () -> String, _ body: () -> T) throws -> T? {
        while true {
            let result = body()
            if result == -1 {
                let code = Glibc.errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return nil }
                throw SystemError(call: call(), errno: code)
            }
            return result
        }
    }

    /// `read(2)` into `buffer`; nil when it would block, 0 at end of file.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        try nonBlocking("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `write(2)` from `bytes`; nil when it would block, else the count written.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try nonBlocking("write") { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes` to a blocking fd (retries partial writes and EINTR).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try bytes.withUnsafeBytes { raw in
                try retrying("write") { Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset) }
            }
            offset += n
        }
    }

    /// Sets or clears `O_NONBLOCK` on `fd`.
    public static func setNonBlocking(_ fd: Int32, _ on: Bool = true) throws {
        let flags = try retrying("fcntl(F_GETFL)") { cb_fcntl_get(fd, F_GETFL) }
        let wanted = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK)
        if wanted != flags { try retrying("fcntl(F_SETFL)") { cb_fcntl_set(fd, F_SETFL, wanted) } }
    }

    /// Sets `FD_CLOEXEC` on `fd`.
    public static func setCloseOnExec(_ fd: Int32) throws {
        let flags = try retrying("fcntl(F_GETFD)") { cb_fcntl_get(fd, F_GETFD) }
        try retrying("fcntl(F_SETFD)") { cb_fcntl_set(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Closes `fd`, ignoring errors (Linux closes the fd even when close reports EINTR).
    public static func close(_ fd: Int32) {
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Creates a pipe with both ends non-blocking and close-on-exec: (read end, write end).
    public static func pipe(nonBlocking: Bool = true) throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try retrying("pipe") { Glibc.pipe(&fds) }
        for fd in fds {
            try setCloseOnExec(fd)
            if nonBlocking { try setNonBlocking(fd) }
        }
        return (fds[0], fds[1])
    }
}

@_exported import CLinux
