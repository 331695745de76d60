import DriveCore

/// One line the car sent (docs/protocol.md §7), made safe to show: cut at 1 KiB, bad UTF-8 escaped.
public struct CarLine: Hashable, Sendable, CustomStringConvertible {
    /// When the line was read (CLOCK_MONOTONIC).
    public var time: Instant
    /// The line's text without its terminator.
    public var text: String

    /// Creates a line read at `time`.
    public init(time: Instant, text: String) {
        self.time = time
        self.text = text
    }

    public var description: String { "\(time) \(text)" }
}
