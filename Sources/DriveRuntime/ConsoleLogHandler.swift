import DriveSystem
import Glibc
import Logging

/// Where log lines go: stderr by default, or a closure (the run view) while one is set.
///
/// When the fd is the systemd journal's stream (`JournalStream`: `JOURNAL_STREAM` names it, as for a
/// service whose stderr is the journal), lines start with their syslog priority (`<4>` for a warning,
/// sd-daemon.h's prefixes) so `journalctl -p warning` filters them, and carry no wall-clock time (the
/// journal stamps each line).
///
/// Emitting never blocks: lines for the fd go through a `BoundedWriter` (256 lines / 64 KiB,
/// written by a helper thread); when stderr is not being read lines are dropped and counted, and
/// one line says how many once it moves again. What is still queued at a normal exit is written
/// within a short bound (`BoundedWriter.drainAll`, run by `atexit`).
public final class LogSink: @unchecked Sendable {
    private let lock = ConditionLock()
    private var divert: ((String) -> Void)?
    private let writer: BoundedWriter
    /// True when the fd is the journal's stream: lines get a priority prefix and no time.
    public let isJournal: Bool

    /// Writes to `fd` (default stderr) until `divert` is set; `journalStream` is `JOURNAL_STREAM` (read
    /// from the environment unless given).
    public init(fd: Int32 = 2, journalStream: String? = JournalStream.environment("JOURNAL_STREAM")) {
        writer = fd == 2 ? BoundedWriter.standardError : BoundedWriter(fd: fd) { count in
            "carbridge: \(count) log line\(count == 1 ? "" : "s") dropped (the log was not being read)"
        }
        isJournal = JournalStream.isJournal(fd: fd, journalStream: journalStream)
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

    /// Emits one log line of `level` from `label`: as `ConsoleLogHandler.line` (stamped now) to the
    /// fd or the divert handler, or, to the journal, `<N><level> <label>: <message>` without the time.
    public func emit(level: Logger.Level, label: String, message: String) {
        lock.lock()
        let handler = divert
        lock.unlock()
        if let handler {
            handler(ConsoleLogHandler.line(level: level, label: label, message: message))
        } else if isJournal {
            writer.write(ConsoleLogHandler.journalLine(level: level, label: label, message: message))
        } else {
            writer.write(ConsoleLogHandler.line(level: level, label: label, message: message))
        }
    }

    /// Lines dropped because the fd was not taking them.
    public var droppedLines: Int { writer.droppedLines }

    /// Waits (at most `timeout`) until the queued lines were written; false when some were not.
    @discardableResult
    public func drain(within timeout: Duration) -> Bool { writer.drain(within: timeout) }
}

/// A swift-log handler that writes `<HH:MM:SS.mmm> <level> <label>: <message> [metadata]` lines (local time) to a
/// `LogSink` (to the journal: `<N><level> <label>: <message> [metadata]`, see `LogSink`).
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
        sink.emit(level: event.level, label: label, message: "\(event.message)" + extras)
    }

    /// A line as this handler writes it, stamped now: `<HH:MM:SS.mmm> <level> <label>: <message>`.
    public static func line(level: Logger.Level, label: String, message: String) -> String {
        "\(WallClock.now()) \(level) \(label): \(message)"
    }

    /// A line for the journal's stream: `<N><level> <label>: <message>`, N the syslog priority of
    /// `level` (`priority(of:)`), no time (the journal stamps each line).
    public static func journalLine(level: Logger.Level, label: String, message: String) -> String {
        JournalStream.prefix(priority: priority(of: level)) + "\(level) \(label): \(message)"
    }

    /// The syslog priority of a swift-log level (sd-daemon.h): critical 2 (`SD_CRIT`), error 3,
    /// warning 4, notice 5, info 6, debug and trace 7.
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .critical: return 2
        case .error: return 3
        case .warning: return 4
        case .notice: return 5
        case .info: return 6
        case .debug, .trace: return 7
        }
    }

}
