import Foundation
import Logging

/// Where log lines go: stderr by default, or a closure (the run view) while one is set.
public final class LogSink: @unchecked Sendable {
    private let lock = NSLock()
    private var divert: ((String) -> Void)?
    private let fd: Int32

    /// Writes to `fd` (default stderr) until `divert` is set.
    public init(fd: Int32 = 2) { self.fd = fd }

    /// Sends lines to `handler` instead of the fd (nil: back to the fd).
    public func divert(to handler: ((String) -> Void)?) {
        lock.lock()
        divert = handler
        lock.unlock()
    }

    /// Emits one line.
    public func emit(_ line: String) {
        lock.lock()
        let handler = divert
        lock.unlock()
        if let handler {
            handler(line)
        } else {
            var bytes = Array((line + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            bytes.removeAll()
        }
    }
}

/// A swift-log handler that writes `<monotonic seconds> <level> <label>: <message> [metadata]` lines to a `LogSink`.
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

    public func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?,
        source: String, file: String, function: String, line: UInt
    ) {
        var all = metadata
        if let explicit { all.merge(explicit) { $1 } }
        let extras = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let seconds = Double(ProcessInfo.processInfo.systemUptime)
        sink.emit(String(format: "%.3f", seconds) + " \(level) \(label): \(message)\(extras)")
    }
}
