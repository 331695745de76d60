import DriveSystem
import Glibc
import Logging

/// Where log lines go: stderr by default, or a closure (the run view) while one is set.
///
/// Emitting never blocks: lines for the fd go through a `BoundedWriter` (256 lines / 64 KiB,
/// written by a helper thread); when stderr is not being read lines are dropped and counted, and
/// one line says how many once it moves again. What is still queued at a normal exit is written
/// within a short bound (`BoundedWriter.drainAll`, run by `atexit`).
public final class LogSink: @unchecked Sendable {
    private let lock = ConditionLock()
    private var divert: ((String) -> Void)?
    private let writer: BoundedWriter

    /// Writes to `fd` (default stderr) until `divert` is set.
    public init(fd: Int32 = 2) {
        writer = fd == 2 ? BoundedWriter.standardError : BoundedWriter(fd: fd) { count in
            "carbridge: \(count) log line\(count == 1 ? "" : "s") dropped (the log was not being read)"
        }
    }

    /// Sends lines to `handler` instead of the fd (nil: back to the fd).
    public func divert(to handler: ((String) -> Void)?) {
        lock.lock()
        divert = handler
        lock.unlock()
    }

    /// Emits one line; never blocks.
    public func emit(_ line: String) {
        lock.lock()
        let handler = divert
        lock.unlock()
        if let handler {
            handler(line)
        } else {
            writer.write(line)
        }
    }

    /// Lines dropped because the fd was not taking them.
    public var droppedLines: Int { writer.droppedLines }

    /// Waits (at most `timeout`) until the queued lines were written; false when some were not.
    @discardableResult
    public func drain(within timeout: Duration) -> Bool { writer.drain(within: timeout) }
}

/// A swift-log handler that writes `<HH:MM:SS.mmm> <level> <label>: <message> [metadata]` lines (local time) to a `LogSink`.
public struct ConsoleLogHandler: LogHandler {
    /// The sink lines go to.
    public let sink: LogSink
    private let label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    /// Creates a handler for `label` at `level`.
    public init(label: String, sink: LogSink, level: Logger.Level) {
        self.label = label
        self.sink = sink
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        let extras = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.emit(Self.line(level: event.level, label: label, message: "\(event.message)") + extras)
    }

    /// A line as this handler writes it, stamped now: `<HH:MM:SS.mmm> <level> <label>: <message>`.
    public static func line(level: Logger.Level, label: String, message: String) -> String {
        "\(WallClock.now()) \(level) \(label): \(message)"
    }

}
