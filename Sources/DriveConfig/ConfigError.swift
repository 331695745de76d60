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

/// Every problem found in one config file, in file order (never empty): what `check-config` and
/// `run --config` report, one `file:line: key: message` line each, like a compiler.
public struct ConfigErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, in file order (by line; problems without a line last).
    public let errors: [ConfigError]

    /// Sorts `errors` into file order (keeping the order of problems on the same line); at least one.
    public init(_ errors: [ConfigError]) {
        precondition(!errors.isEmpty, "ConfigErrors needs at least one error")
        self.errors = errors.enumerated()
            .sorted { ($0.element.line ?? Int.max, $0.offset) < ($1.element.line ?? Int.max, $1.offset) }
            .map(\.element)
    }

    /// The first problem in file order.
    public var first: ConfigError { errors[0] }

    /// One line per problem.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
