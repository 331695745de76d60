import DriveCore
import DriveSystem
import Glibc

/// Dry run: every frame is written to an fd (default standard output) as
/// `<monotonic seconds with ms> <frame text>`; always up.
public final class StdoutLink: CarLink {
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

    /// Creates a dry-run link writing to `fd`.
    public init(loop: EventLoop, fd: Int32 = 1, name: String = "stdout") {
        self.loop = loop
        self.fd = fd
        self.name = name
    }

    /// Reports `.up`.
    public func start() { onStateChange?(state) }

    /// Writes `<seconds.mmm> <frame>` and a newline.
    public func send(_ frame: Frame) {
        guard state == .up else { return }
        let line = Self.line(for: frame, at: loop.now())
        do {
            try Syscall.writeAll(fd, Array(line.utf8))
        } catch let error as SystemError {
            state = .down(reason: "cannot write frames to \(name) (\(SocketSupport.reason(error.errno)))")
            onStateChange?(state)
        } catch {}
    }

    /// The printed line for `frame` at `time`, with its newline: `12.345 M,0,40,1\n`.
    public static func line(for frame: Frame, at time: Instant) -> String {
        let milliseconds = time.nanoseconds / 1_000_000
        let fraction = milliseconds % 1000
        let padding = fraction < 10 ? "00" : (fraction < 100 ? "0" : "")
        return "\(milliseconds / 1000).\(padding)\(fraction) \(frame.text)\n"
    }

    /// Every frame is written at once: nothing waits.
    public func flush(within: Duration, then done: @escaping (FlushResult) -> Void) {
        let result: FlushResult = state == .up ? .delivered : .linkDown
        loop.execute { done(result) }
    }

    /// Closes (the fd stays open: it is not ours) and calls `done`.
    public func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        let result: FlushResult = state == .up ? .delivered : .linkDown
        if state != .closed {
            state = .closed
            onStateChange?(state)
        }
        loop.execute { done(result) }
    }
}
