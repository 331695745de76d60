import DriveSystem
import Glibc

/// Puts a terminal into the raw-ish mode the keyboard needs (no echo, no line buffering,
/// signals kept so Ctrl-C still becomes SIGINT) and restores it exactly on `restore()`.
public final class TerminalMode {
    private let fd: Int32
    private var saved = termios()
    private var active = false

    /// True when `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Switches `fd` to raw input; throws if it is not a terminal.
    public init(fd: Int32) throws {
        self.fd = fd
        try enter()
    }

    /// Takes the terminal again after `restore()` (a job-control stop and `fg`): the settings
    /// the terminal has now become the ones `restore()` puts back (the shell may have changed
    /// them meanwhile), then raw mode. While raw already, raw mode is only applied again (after a
    /// stop carbridge did not see, the shell may have reset the terminal). Call it only while this
    /// process is the terminal's foreground process group.
    public func reenter() throws {
        try enter()
    }

    private func enter() throws {
        if !active {
            try Syscall.retrying("tcgetattr") { tcgetattr(fd, &saved) }
        }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        try Syscall.retrying("tcsetattr") { tcsetattr(fd, TCSANOW, &raw) }
        active = true
    }

    /// Puts the terminal back as it was (idempotent).
    public func restore() {
        guard active else { return }
        active = false
        _ = tcsetattr(fd, TCSANOW, &saved)
    }

    deinit { restore() }
}
