import DriveCore
import DriveSystem
import Glibc

/// Dry run: every frame is written to an fd (default standard output) as
/// `<monotonic seconds with ms> <frame text>`; always up.
///
/// Never blocks the loop: lines go through a `BoundedWriter` (at most `maxQueuedFrames` waiting,
/// written by a helper thread). A reader that stalls loses frames, which are counted
/// (`droppedFrames`) and reported in the output itself once it moves again:
/// `carbridge: N frames dropped (stdout was not being read)`.
public final class StdoutLink: CarLink {
    /// At most this many frames wait for a slow reader (about 3 s of streaming at 50 ms).
    public static let maxQueuedFrames = 64
    /// `stdout`.
    public let name: String
    /// Up until shut down (or until the fd stops taking output).
    public private(set) var state: LinkState = .up
    /// Called on every state change.
    public var onStateChange: ((LinkState) -> Void)?
    /// Never called: nothing answers a dry run.
    public var onLine: ((CarLine) -> Void)?

    private let loop: EventLoop
    private let fd: Int32
    private let writer: BoundedWriter
    /// How often flush and shutdown look whether the writer has caught up.
    public var flushPollInterval: Duration = .milliseconds(10)

    /// Creates a dry-run link writing to `fd`.
    public init(loop: EventLoop, fd: Int32 = 1, name: String = "stdout") {
        self.loop = loop
        self.fd = fd
        self.name = name
        writer = BoundedWriter(fd: fd, maxLines: Self.maxQueuedFrames, maxBytes: 16 * 1024) { count in
            "carbridge: \(count) frame\(count == 1 ? "" : "s") dropped (\(name) was not being read)"
        }
    }

    deinit { writer.finish() }

    /// Frames dropped because the reader did not keep up.
    public var droppedFrames: Int { writer.droppedLines }

    /// Reports `.up`.
    public func start() { onStateChange?(state) }

    /// Queues `<seconds.mmm> <frame>` and a newline for the writer; never blocks.
    public func send(_ frame: Frame) {
        guard state == .up else { return }
        if let code = writer.writeError {
            state = .down(reason: "cannot write frames to \(name) (\(SocketSupport.reason(code)))")
            onStateChange?(state)
            return
        }
        let line = Self.line(for: frame, at: loop.now())
        writer.write(String(line.dropLast()))
    }

    /// The printed line for `frame` at `time`, with its newline: `12.345 M,0,40,1\n`.
    public static func line(for frame: Frame, at time: Instant) -> String {
        let milliseconds = time.nanoseconds / 1_000_000
        let fraction = milliseconds % 1000
        let padding = fraction < 10 ? "00" : (fraction < 100 ? "0" : "")
        return "\(milliseconds / 1000).\(padding)\(fraction) \(frame.text)\n"
    }

    /// Calls `done` once the writer has written every queued frame (`.delivered`), or with `.timedOut`.
    public func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        guard state == .up else {
            loop.execute { done(.linkDown) }
            return
        }
        waitForWriter(until: loop.now().advanced(by: within), done)
    }

    /// Waits (at most `flushWithin`) for the queued frames, closes (the fd stays open: it is not
    /// ours) and calls `done`.
    public func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        let wasUp = state == .up
        let finish: (FlushResult) -> Void = { [weak self] result in
            guard let self else { return done(result) }
            if self.state != .closed {
                self.state = .closed
                self.onStateChange?(self.state)
            }
            done(wasUp ? result : .linkDown)
        }
        if wasUp {
            waitForWriter(until: loop.now().advanced(by: flushWithin), finish)
        } else {
            loop.execute { finish(.linkDown) }
        }
    }

    private func waitForWriter(until deadline: Instant, _ done: @escaping (FlushResult) -> Void) {
        if writer.pendingLines == 0 || writer.writeError != nil {
            let result: FlushResult = writer.writeError == nil ? .delivered : .linkDown
            loop.execute { done(result) }
        } else if loop.now() >= deadline {
            loop.execute { done(.timedOut) }
        } else {
            loop.schedule(after: flushPollInterval) { [weak self] in
                guard let self else { return done(.linkDown) }
                self.waitForWriter(until: deadline, done)
            }
        }
    }
}
