import Glibc

/// Whether an fd is connected to the systemd journal, as sd-daemon(3) and journald define it: a
/// service whose stdout or stderr goes to the journal gets `JOURNAL_STREAM=DEVICE:INODE` (decimal)
/// in its environment, naming that stream; the fd is the journal's only while `fstat` of it still
/// gives the same device and inode (a shell redirect or a child with other fds inherits the
/// variable, not the stream).
///
/// Lines written to such a stream may start with a syslog priority, `<N>` (sd-daemon.h's
/// `SD_ERR` … `SD_DEBUG`), which journald takes as the line's priority, so `journalctl -p warning`
/// filters them; it also stamps every line itself.
public enum JournalStream {
    /// True when `fd` is the stream `JOURNAL_STREAM` names (read from the environment unless given).
    public static func isJournal(fd: Int32, journalStream: String? = environment("JOURNAL_STREAM")) -> Bool {
        guard let journalStream, let (device, inode) = parse(journalStream) else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// `DEVICE:INODE` as two decimal numbers; nil when it is not that.
    public static func parse(_ text: String) -> (device: UInt64, inode: UInt64)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        return (device, inode)
    }

    /// The `JOURNAL_STREAM` value for `fd` (what systemd would set for a stream that is `fd`); nil when
    /// `fstat` fails. For tests and tools.
    public static func value(for fd: Int32) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return "\(UInt64(info.st_dev)):\(UInt64(info.st_ino))"
    }

    /// The syslog priority prefix sd-daemon.h defines for `priority` (0 emerg … 7 debug): `<3>` for errors.
    public static func prefix(priority: Int) -> String { "<\(max(0, min(7, priority)))>" }

    /// `name` from the environment, nil when unset.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
