/// Why a line from the bridge is not a valid frame (docs/protocol.md §2), in one sentence.
public struct CarFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line that was rejected (without terminator).
    public var line: String
    /// What exactly is wrong, e.g. "speed 45 is not a multiple of 10".
    public var reason: String

    /// Creates an error for `line` saying `reason`.
    public init(line: String, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "\(reason) (in \"\(line)\")" }
}
