/// What a config key holds and which values it allows: its TOML type and range or spellings. The one
/// place the range and spelling messages are worded, for files and flags alike.
public enum ConfigKind: Hashable, Sendable {
    /// A TOML integer in the range.
    case integer(ClosedRange<Int>)
    /// A TOML number (integers accepted) in the range.
    case number(ClosedRange<Double>)
    /// `true` or `false`.
    case boolean
    /// A string, one of these spellings.
    case choice([String])
    /// A string whose form the key checks itself (a URL, a device matcher, an evdev name).
    case string

    /// The type as the reference names it.
    public var typeName: String {
        switch self {
        case .integer: return "integer"
        case .number: return "number"
        case .boolean: return "boolean"
        case .choice, .string: return "string"
        }
    }

    /// The values allowed, for documentation and `--help` (`10…240`, `"lf", "crlf", "none"`); nil when
    /// the type says it all.
    public var allowedText: String? {
        switch self {
        case .integer(let range): return "\(range.lowerBound)…\(range.upperBound)"
        case .number(let range): return "\(Self.short(range.lowerBound))…\(Self.short(range.upperBound))"
        case .boolean, .string: return nil
        case .choice(let names): return Self.quoted(names)
        }
    }

    /// Why `scalar` is not allowed (out of range, not one of the spellings), or nil. The scalar has the
    /// kind's type already (`ConfigTable.scalar(_:as:)` and `scalar(fromArgument:)` see to it).
    func problem(with scalar: ConfigScalar) -> String? {
        switch (self, scalar) {
        case (.integer(let range), .integer(let number)):
            return range.contains(number) ? nil : Self.outOfRange(number, range)
        case (.number(let range), .number(let number)):
            return number.isFinite && range.contains(number) ? nil : Self.outOfRange(number, range)
        case (.choice(let names), .string(let text)):
            return names.contains(text) ? nil : Self.notOneOf(text, names)
        default:
            return nil
        }
    }

    /// A command-line argument read as this kind's TOML type.
    func scalar(fromArgument text: String) throws(ConfigValueError) -> ConfigScalar {
        switch self {
        case .integer:
            guard let number = Int(text) else { throw ConfigValueError("\"\(text)\" is not an integer") }
            return .integer(number)
        case .number:
            guard let number = Double(text) else { throw ConfigValueError("\"\(text)\" is not a number") }
            return .number(number)
        case .boolean:
            guard let flag = Bool(text) else { throw ConfigValueError("\"\(text)\" is not true or false") }
            return .boolean(flag)
        case .choice, .string:
            return .string(text)
        }
    }

    static func outOfRange<Number: Comparable>(_ number: Number, _ range: ClosedRange<Number>) -> String {
        "\(number) is out of range (\(range.lowerBound)…\(range.upperBound))"
    }

    static func notOneOf(_ text: String, _ names: [String]) -> String {
        "\"\(text)\" is not one of \(quoted(names))"
    }

    private static func quoted(_ names: [String]) -> String {
        names.map { "\"\($0)\"" }.joined(separator: ", ")
    }

    /// `86400` rather than `86400.0`, `0.9` as it is.
    static func short(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? "\(Int(number))" : "\(number)"
    }
}

/// A TOML scalar, as a config file or a command-line flag gives it.
public enum ConfigScalar: Hashable, Sendable, CustomStringConvertible {
    /// A TOML integer.
    case integer(Int)
    /// A TOML float (or an integer where a number is wanted).
    case number(Double)
    /// `true` or `false`.
    case boolean(Bool)
    /// A TOML string.
    case string(String)

    var integerValue: Int? {
        if case .integer(let number) = self { return number }
        return nil
    }

    var numberValue: Double? {
        switch self {
        case .number(let number): return number
        case .integer(let number): return Double(number)
        default: return nil
        }
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value in TOML syntax (`240`, `2.0`, `true`, `"sim"`).
    public var description: String {
        switch self {
        case .integer(let number): return "\(number)"
        case .number(let number): return "\(number)"
        case .boolean(let flag): return "\(flag)"
        case .string(let text):
            var literal = ""
            TOMLString.append(text, to: &literal)
            return literal
        }
    }
}
