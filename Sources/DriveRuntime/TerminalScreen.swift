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
        guard !scheduled, !closed else { return }
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
        guard !closed else { return }
        lastDraw = loop.now()
        write(render())
    }

    /// Draws a last screen, shows the cursor, and gives the fd its blocking mode back.
    public func close(finalText: String) {
        guard !closed else { return }
        closed = true
        _ = cb_fcntl_set(fd, F_SETFL, savedFlags)
        var text = render()
        text += "\u{1B}[?25h" + finalText
        try? Syscall.writeAll(fd, Array(text.utf8))
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
