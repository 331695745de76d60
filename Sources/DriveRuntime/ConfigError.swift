/// A problem in a config file, with where it is: `file:line: key: message`.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The config file's path (as given).
    public var file: String
    /// The 1-based line, when known.
    public var line: Int?
    /// The dotted key, e.g. `drive.max_speed`, when the problem is one key's.
    public var key: String?
    /// What is wrong and what would be right.
    public var message: String

    /// Creates an error.
    public init(file: String, line: Int?, key: String?, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(key): " }
        return text + message
    }
}
