import DriveSystem
import Glibc

/// carbridge's state directory and the small files the dashboard keeps there (its self-signed
/// certificate), with plain system calls.
package enum StateFile {
    /// Where carbridge keeps state: systemd's `$STATE_DIRECTORY` (`StateDirectory=`; the first one when it
    /// lists several), else `$XDG_STATE_HOME/carbridge`, else `~/.local/state/carbridge`. Throws when
    /// none of them can be named (no `HOME` either).
    package static func directory(environment: [String: String]) throws -> String {
        if let state = environment["STATE_DIRECTORY"], let first = state.split(separator: ":").first, !first.isEmpty {
            return String(first)
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return xdg + "/carbridge"
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return home + "/.local/state/carbridge"
        }
        throw DashboardError("no state directory for the dashboard's certificate: set STATE_DIRECTORY (systemd's StateDirectory=), XDG_STATE_HOME or HOME")
    }

    /// The process's environment as a dictionary.
    package static var processEnvironment: [String: String] {
        var values: [String: String] = [:]
        var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return values
    }

    /// Makes `path` and its missing parents (mode 0700: the key lives there); a relative path is taken
    /// from the working directory.
    static func makeDirectory(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw DashboardError("cannot make the state directory \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The whole file as UTF-8 text.
    static func read(_ path: String) throws(DashboardError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw DashboardError("\(path): \(errno == ENOENT ? "missing" : String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw DashboardError("\(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces `path` with `text` at `mode`: a temporary file in the same directory (made 0600 by
    /// `mkstemp`, so the key is never readable by others, even for a moment), flushed, then renamed over it.
    static func writeAtomically(_ text: String, to path: String, mode: mode_t) throws {
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { throw DashboardError("cannot write \(path): \(String(cString: strerror(errno)))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var failure: Int32 = 0
        if fchmod(fd, mode) != 0 { failure = errno }
        if failure == 0 {
            do { try Syscall.writeAll(fd, Array(text.utf8)) } catch { failure = (error as? SystemError)?.errno ?? EIO }
        }
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw DashboardError("cannot write \(path): \(String(cString: strerror(failure)))")
        }
    }
}
