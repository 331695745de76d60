import DriveSystem
import DriveCore
import Glibc

/// Draws the run view on a terminal without ever blocking the event loop: writes are
/// non-blocking, a screen the terminal cannot take right now is dropped (the next one is
/// a full redraw), and redraws are coalesced to at most one per `minimumInterval`.
public final class TerminalScreen {
    private let fd: Int32
    private let loop: EventLoop
    private let savedFlags: Int32
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
        savedFlags = try Syscall.retrying("fcntl(F_GETFL)") { cb_fcntl_get(fd, F_GETFL) }
        try Syscall.setNonBlocking(fd)
        write("\u{1B}[?25l")  // hide the cursor
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

    /// Draws a last screen, shows the cursor, and gives the fd its blocking mode back. While
    /// paused (the shell has the terminal, maybe with carbridge in the background) only
    /// `finalText` is written.
    public func close(finalText: String) {
        guard !closed else { return }
        closed = true
        _ = cb_fcntl_set(fd, F_SETFL, savedFlags)
        var text = paused ? "" : render() + "\u{1B}[?25h"
        text += finalText
        try? Syscall.writeAll(fd, Array(text.utf8))
    }

    /// Before a job-control stop: draws the current screen, shows the cursor (the shell's prompt
    /// comes below the view) and gives the fd its blocking mode back; nothing is drawn until `resume()`.
    public func pause() {
        guard !closed, !paused else { return }
        paused = true
        _ = cb_fcntl_set(fd, F_SETFL, savedFlags)
        try? Syscall.writeAll(fd, Array((render() + "\u{1B}[?25h").utf8))
    }

    /// Back in the foreground after `pause()`: non-blocking again, the cursor hidden, a full redraw.
    public func resume() {
        guard !closed, paused else { return }
        paused = false
        try? Syscall.setNonBlocking(fd)
        write("\u{1B}[?25l")
        setNeedsDisplay()
    }

    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                (try? Syscall.write(fd, UnsafeRawBufferPointer(rebasing: raw[offset...]))) ?? nil
            }
            guard let written, written > 0 else { return }  // the terminal is full: drop this screen
            offset += written
        }
    }
}
