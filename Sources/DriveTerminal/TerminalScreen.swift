import DriveSystem
import DriveCore
import CLinux
import Glibc

/// Draws the run view on a terminal without ever blocking the event loop: writes are
/// non-blocking, a screen the terminal cannot take right now is dropped (the next one is
/// a full redraw), and redraws are coalesced to at most one per `minimumInterval`.
///
/// The terminal's own fd is never switched to `O_NONBLOCK` (that flag lives on the open file
/// description the shell shares, and a crash would leave it there): the screen writes through a
/// private description of the same terminal, opened non-blocking from `/proc/self/fd/N`. If that
/// cannot be opened it writes only when `poll` says there is room, in small pieces.
public final class TerminalScreen {
    private let fd: Int32
    private let loop: EventLoop
    /// A private non-blocking description of the terminal, or -1 (then `fd` with poll).
    private let privateFD: Int32
    private var scheduled = false
    private var lastDraw: Instant?
    private let minimumInterval: Duration
    private let render: () -> String
    private var closed = false
    private var paused = false

    /// Takes over `fd` (a terminal); `render` produces the screen.
    public init(fd: Int32, loop: EventLoop, minimumInterval: Duration = .milliseconds(50), render: @escaping () -> String) throws {
        self.fd = fd
        self.loop = loop
        self.minimumInterval = minimumInterval
        self.render = render
        privateFD = cb_open("/proc/self/fd/\(fd)", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0)
        write("\u{1B}[?25l")  // hide the cursor
    }

    /// The size of the terminal on `fd` in columns × rows (80 × 24 when it does not say).
    public static func size(of fd: Int32) -> (columns: Int, rows: Int) {
        var size = winsize()
        guard cb_ioctl_ptr(fd, cb_TIOCGWINSZ(), &size) == 0 else { return (80, 24) }
        return (size.ws_col > 0 ? Int(size.ws_col) : 80, size.ws_row > 0 ? Int(size.ws_row) : 24)
    }

    /// Asks for a redraw soon (coalesced).
    public func setNeedsDisplay() {
        guard !scheduled, !closed, !paused else { return }
        scheduled = true
        let now = loop.now()
        if let lastDraw, now < lastDraw + minimumInterval {
            loop.schedule(at: lastDraw + minimumInterval) { [weak self] in self?.draw() }
        } else {
            loop.execute { [weak self] in self?.draw() }
        }
    }

    private func draw() {
        scheduled = false
        guard !closed, !paused else { return }
        lastDraw = loop.now()
        write(render())
    }

    /// Draws a last screen and shows the cursor, waiting at most `within` for a terminal that
    /// does not take output (stopped with Ctrl-S, a stuck ssh session), so exit never hangs on it.
    /// While paused (the shell has the terminal, maybe with carbridge in the background) only
    /// `finalText` is written.
    public func close(finalText: String, within: Duration = .milliseconds(500)) {
        guard !closed else { return }
        closed = true
        var text = paused ? "" : render() + "\u{1B}[?25h"
        text += finalText
        write(text, waitingAtMost: within)
        Syscall.close(privateFD)
    }

    /// Before a job-control stop: draws the current screen and shows the cursor (the shell's
    /// prompt comes below the view); nothing is drawn until `resume()`.
    public func pause(within: Duration = .milliseconds(200)) {
        guard !closed, !paused else { return }
        paused = true
        write(render() + "\u{1B}[?25h", waitingAtMost: within)
    }

    /// Back in the foreground after `pause()`: the cursor hidden, a full redraw.
    public func resume() {
        guard !closed, paused else { return }
        paused = false
        write("\u{1B}[?25l")
        setNeedsDisplay()
    }

    /// Writes what the terminal takes now; the rest of this screen is dropped (or, with `waitingAtMost`,
    /// waited for that long). The wait is on the terminal in wall time, whatever the loop's clock (a
    /// manual clock does not move while this blocks). A terminal that fails (EIO after its hang-up)
    /// takes nothing more.
    private func write(_ text: String, waitingAtMost wait: Duration? = nil) {
        let deadline = wait.map { MonotonicClock.nanoseconds() + $0.nanoseconds }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written: Int?
            do {
                written = try bytes.withUnsafeBytes { raw throws -> Int? in
                    let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    if privateFD >= 0 { return try Syscall.write(privateFD, rest) }
                    // Without a private description: only when poll says there is room, a little at a time.
                    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    guard poll(&pfd, 1, 0) == 1, pfd.revents & Int16(POLLOUT) != 0 else { return nil }
                    return try Syscall.write(fd, UnsafeRawBufferPointer(rebasing: rest.prefix(256)))
                }
            } catch {
                return
            }
            if let written, written > 0 {
                offset += written
                continue
            }
            // The terminal is full: drop this screen, or wait a little for it at the end.
            guard let deadline else { return }
            let left = deadline - MonotonicClock.nanoseconds()
            if left <= 0 { return }
            var pfd = pollfd(fd: privateFD >= 0 ? privateFD : fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pfd, 1, Int32(clamping: min(left / 1_000_000 + 1, 10)))
        }
    }
}
