import DriveConfig
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
        do {
            return try TextFile.read(path)
        } catch {
            throw DashboardError("\(path): \(error.errno == ENOENT ? "missing" : error.reason)")
        }
    }

    /// Replaces `path` with `text` at `mode` (`TextFile.writeAtomically`: the temporary file is 0600 from
    /// `mkstemp` on, so the key is never readable by others, even for a moment).
    static func writeAtomically(_ text: String, to path: String, mode: mode_t) throws {
        do {
            try TextFile.writeAtomically(text, to: path, mode: mode)
        } catch {
            throw DashboardError("cannot write \(path): \(String(cString: strerror(error.errno)))")
        }
    }
}
