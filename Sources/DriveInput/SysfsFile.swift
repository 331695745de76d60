import DriveInputModel
import DriveSystem
import CLinux
import Glibc

/// Small helpers for sysfs attribute files.
enum SysfsFile {
    /// The file's text without surrounding whitespace, or nil when it cannot be read.
    static func readText(_ path: String) -> String? {
        readRaw(path, limit: 1 << 20)?.trimmingWhitespace()
    }

    /// The file's whole text (up to `limit` bytes), or nil when it cannot be read.
    static func readRaw(_ path: String, limit: Int = 256 << 20) -> String? {
        let fd = cb_open(path, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        defer { Syscall.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True when `path` exists.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// True when this process may read `path`.
    static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// The names in directory `path` (without `.` and `..`), or nil when it cannot be listed.
    static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

extension SysfsFile {
    /// Writes `text` to the attribute `path` in one `write` (sysfs takes an attribute's value in one piece);
    /// 0 when it was taken whole, else the errno of the open or the write. `O_TRUNC`, as a shell's `>` opens
    /// it: sysfs ignores it, and a plain file (a test's tree) ends up holding just `text`.
    static func write(_ path: String, _ text: String) -> Int32 {
        let fd = cb_open(path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0)
        guard fd >= 0 else { return errno }
        defer { Syscall.close(fd) }
        var bytes = Array(text.utf8)
        while true {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written == bytes.count { return 0 }
            if written < 0, errno == EINTR { continue }
            return written < 0 ? errno : EIO
        }
    }
}
