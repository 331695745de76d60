import DriveSystem
import Glibc

/// Reading and atomically replacing a small text file with plain system calls (no Foundation: the daemon
/// does not load it for the few calls the config needs; docs/performance.md).
package enum TextFile {
    /// Why a file operation failed: `no such file` for ENOENT, else the system's words (`Permission denied`, …).
    package struct Failure: Error, CustomStringConvertible {
        /// The error number.
        package let errno: Int32
        /// The reason in words.
        package var reason: String { errno == ENOENT ? "no such file" : String(cString: strerror(errno)) }
        package var description: String { reason }
    }

    /// The whole file as UTF-8 text (invalid bytes become U+FFFD).
    package static func read(_ path: String) throws(Failure) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw Failure(errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces the file at `path` with `text`: written to a temporary file in the same directory (at `mode`, else
    /// with the old file's permissions, if there was one; `mkstemp` makes it 0600 until then), flushed, then renamed over it.
    package static func writeAtomically(_ text: String, to path: String, mode: mode_t? = nil) throws(Failure) {
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { throw Failure(errno: errno) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var status = stat()
        let fileMode: mode_t
        if let mode {
            fileMode = mode
        } else if stat(path, &status) == 0 {
            fileMode = status.st_mode & 0o7777
        } else {
            let mask = umask(0)
            umask(mask)
            fileMode = 0o666 & ~mask
        }
        var failure: Int32 = 0
        if fchmod(fd, fileMode) != 0 { failure = errno }
        if failure == 0 {
            do { try Syscall.writeAll(fd, Array(text.utf8)) } catch { failure = (error as? SystemError)?.errno ?? EIO }
        }
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw Failure(errno: failure)
        }
    }

    /// Foundation's `.whitespaces`: tab and the space separators (Unicode category Zs).
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// `text` without the leading and trailing scalars `trimmed` accepts (what `trimmingCharacters(in:)` did).
    static func trimming<Text: StringProtocol>(_ text: Text, _ trimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !trimmed($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !trimmed($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
