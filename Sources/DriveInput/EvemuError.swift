/// A malformed evemu recording: the line and what was expected there.
public struct EvemuError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line number (one past the last line when the file ends too early).
    public var line: Int
    /// What was wrong, e.g. `expected "I: <bustype> <vendor> <product> <version>" (hex), got "I: 3"`.
    public var message: String
    /// The file, when known.
    public var file: String?

    /// Creates an error.
    public init(line: Int, message: String, file: String? = nil) {
        self.line = line
        self.message = message
        self.file = file
    }

    public var description: String {
        "\(file ?? "evemu recording"):\(line): \(message) (record a device with `evemu-record /dev/input/eventN > FILE`)"
    }
}
