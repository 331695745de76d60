/// A parsed TOML config file that remembers where each key stands, so every error can say `file:line`.
///
/// toml++ parses (`TOMLDocument`, and reports syntax errors with their position); a small line index maps
/// `table.key` to the line that set it, because the parsed tables are read without source positions.
public final class ConfigDocument {
    /// The file name used in errors.
    public let file: String
    private let root: TOMLNode
    private var lineOfKey: [String: Int] = [:]
    private var lineOfTable: [String: Int] = [:]

    /// Parses `text`; a syntax error throws `ConfigError` with the line toml++ reports.
    public init(text: String, file: String) throws(ConfigError) {
        self.file = file
        if let problem = Self.precheck(text) {
            throw ConfigError(file: file, line: problem.line, key: nil, message: "TOML syntax error: \(problem.message)")
        }
        do {
            root = try TOMLDocument(text: text).root
        } catch {
            throw ConfigError(file: file, line: error.line, key: nil, message: "TOML syntax error: \(error.description)")
        }
        indexLines(text)
    }

    /// What toml++ must not be handed, found before it is: a NUL byte (most likely a binary file, which
    /// the message says; toml++ would only name a control character), and toml++ 3 asserts (undefined
    /// behaviour without assertions) on a table header whose name starts with anything but a bare-key character or a quote,
    /// e.g. `[é]`, `[ #x]` or a `[` at the end of a line. Headers are found the way TOML finds them: a `[`
    /// first on a line that is not inside a string, an array or an inline table.
    static func precheck(_ text: String) -> (line: Int, message: String)? {
        let bytes = Array(text.utf8)
        var line = 1
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0  // toml++ skips a UTF-8 byte order mark
        var depth = 0  // open [ and { of values
        var atLineStart = true
        func isBareKey(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        func starts(with delimiter: String, at position: Int) -> Bool {
            let d = Array(delimiter.utf8)
            return position + d.count <= bytes.count && Array(bytes[position..<position + d.count]) == d
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0:
                return (line, "the file contains a NUL byte (is it a text file?)")
            case UInt8(ascii: "\n"):
                line += 1
                atLineStart = true
                index += 1
                continue
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
                continue
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    if bytes[index] == 0 { return (line, "the file contains a NUL byte (is it a text file?)") }
                    index += 1
                }
                continue
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                // Strings: multi-line ones may span lines; a single-line one ends at its quote or the line's end.
                let quote = byte
                let triple = String(repeating: String(UnicodeScalar(quote)), count: 3)
                let multiLine = starts(with: triple, at: index)
                index += multiLine ? 3 : 1
                while index < bytes.count {
                    let c = bytes[index]
                    if c == 0 { return (line, "the file contains a NUL byte (is it a text file?)") }
                    if c == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") { index += 2; continue }
                    if multiLine {
                        if c == UInt8(ascii: "\n") { line += 1 }
                        if starts(with: triple, at: index) { index += 3; break }
                    } else {
                        if c == UInt8(ascii: "\n") { break }
                        if c == quote { index += 1; break }
                    }
                    index += 1
                }
                atLineStart = false
                continue
            case UInt8(ascii: "[") where atLineStart && depth == 0:
                // A table header: [name] or [[name]], the name starting with a bare-key character or a quote.
                var next = index + 1
                if next < bytes.count, bytes[next] == UInt8(ascii: "[") { next += 1 }
                while next < bytes.count, bytes[next] == UInt8(ascii: " ") || bytes[next] == UInt8(ascii: "\t") { next += 1 }
                if next < bytes.count {
                    let first = bytes[next]
                    let fine = isBareKey(first) || first == UInt8(ascii: "\"") || first == UInt8(ascii: "'")
                        || first == UInt8(ascii: "]")
                    if !fine {
                        var end = next
                        while end < bytes.count, bytes[end] & 0xC0 == 0x80 || end == next { end += 1 }
                        let found = first < 0x20 || first == 0x7F
                            ? "the control character \(first) (the end of the line?)"
                            : "\"" + String(decoding: bytes[next..<end], as: UTF8.self) + "\""
                        return (line, "a table name must start with a letter, a digit, _, - or a quote, found \(found)")
                    }
                }
                // The header's own brackets and quoted names are TOML's business: go on after `[` / `[[`.
                index = next
                atLineStart = false
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth = max(0, depth - 1)
            default:
                break
            }
            atLineStart = false
            index += 1
        }
        return nil
    }

    /// The line that set `path` (`table.key`), or the line of its table header.
    public func line(of path: String) -> Int? {
        if let line = lineOfKey[path] { return line }
        if let line = lineOfTable[path] { return line }
        if let dot = path.lastIndex(of: ".") { return lineOfTable[String(path[..<dot])] }
        return nil
    }

    /// Every `table.key` the file sets, with its line.
    public var keyLines: [String: Int] { lineOfKey }

    /// An error about `path`, placed at its line.
    public func error(_ path: String, _ message: String) -> ConfigError {
        ConfigError(file: file, line: line(of: path), key: path, message: message)
    }

    /// The top-level table, for reading sections.
    public var top: ConfigTable { ConfigTable(document: self, path: "", table: root) }

    /// Finds the line of every table header and `key = value` line (for messages at file:line). On the
    /// UTF-8 bytes, so a line is what ends at a `\n` (a `\r\n` too: as `Character`s those were one
    /// grapheme and never split) and a config file costs no `Character` walk.
    private func indexLines(_ text: String) {
        var table = ""
        var number = 0
        var utf8 = text
        utf8.withUTF8 { bytes in
            let newline = UInt8(ascii: "\n")
            var start = 0
            while start <= bytes.count {
                number += 1
                var end = start
                while end < bytes.count && bytes[end] != newline { end += 1 }
                defer { start = end + 1 }
                var first = start
                while first < end && (bytes[first] == UInt8(ascii: " ") || bytes[first] == UInt8(ascii: "\t")) { first += 1 }
                if first < end && bytes[first] == UInt8(ascii: "[") {
                    let inner = first + (first + 1 < end && bytes[first + 1] == UInt8(ascii: "[") ? 2 : 1)
                    guard let close = (inner..<end).first(where: { bytes[$0] == UInt8(ascii: "]") }) else { continue }
                    table = Self.normalizedKeyPath(Self.text(bytes, inner..<close))
                    if lineOfTable[table] == nil { lineOfTable[table] = number }
                    continue
                }
                guard let equals = Self.assignmentIndex(in: bytes, first..<end) else { continue }
                let key = Self.normalizedKeyPath(Self.text(bytes, first..<equals))
                if key.isEmpty { continue }
                let path = table.isEmpty ? key : "\(table).\(key)"
                if lineOfKey[path] == nil { lineOfKey[path] = number }
            }
        }
    }

    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Substring {
        Substring(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
    }

    /// The index of the `=` of a `key = value` line (outside quotes), if the line is one.
    private static func assignmentIndex(in bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> Int? {
        var quote: UInt8?
        for index in line {
            let c = bytes[index]
            if let open = quote {
                if c == open { quote = nil }
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                quote = c
            } else if c == UInt8(ascii: "#") {
                return nil
            } else if c == UInt8(ascii: "=") {
                return index
            }
        }
        return nil
    }

    /// `a . "b c"` → `a.b c`.
    private static func normalizedKeyPath(_ text: Substring) -> String {
        var parts: [String] = []
        var current = ""
        var quote: Character?
        for c in text {
            if let open = quote {
                if c == open { quote = nil } else { current.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "." {
                parts.append(current)
                current = ""
            } else if c != " " && c != "\t" {
                current.append(c)
            }
        }
        parts.append(current)
        return parts.joined(separator: ".")
    }
}

/// One table of a `ConfigDocument`, with typed getters that report wrong types and
/// out-of-range values at their line, and a check for keys nobody asked for.
public final class ConfigTable {
    private let document: ConfigDocument
    private let table: TOMLNode
    /// The dotted path of this table (`""` for the top level).
    public let path: String
    private var consumed: Set<String> = []

    init(document: ConfigDocument, path: String, table: TOMLNode) {
        self.document = document
        self.path = path
        self.table = table
    }

    private func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// An error about `key` of this table, at its line.
    public func error(_ key: String, _ message: String) -> ConfigError {
        document.error(keyPath(key), message)
    }

    /// The keys present in this table, in toml++'s order (byte order of the keys, not the file's).
    public var keys: [String] { table.keys }

    /// The line of `key` in this table.
    public func line(of key: String) -> Int? { document.line(of: keyPath(key)) }

    /// A sub-table; nil when absent. A key of another type is an error.
    public func table(_ key: String) throws(ConfigError) -> ConfigTable? {
        consumed.insert(key)
        guard let value = table[key] else { return nil }
        guard let sub = value.table else { throw wrongType(key, value, expected: "a table ([\(keyPath(key))])") }
        return ConfigTable(document: document, path: keyPath(key), table: sub)
    }

    /// A string value, or `fallback` when absent; `allowed` restricts the spelling.
    public func string(_ key: String, default fallback: String, allowed: [String]? = nil) throws(ConfigError) -> String {
        consumed.insert(key)
        guard let value = table[key] else { return fallback }
        guard let text = value.string else { throw wrongType(key, value, expected: "a string") }
        if let allowed, !allowed.contains(text) { throw error(key, ConfigKind.notOneOf(text, allowed)) }
        return text
    }

    /// An integer value in `range`, or `fallback` when absent.
    public func int(_ key: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        consumed.insert(key)
        guard let value = table[key] else { return fallback }
        guard value.kind == .integer, let number = value.int else { throw wrongType(key, value, expected: "an integer") }
        guard range.contains(number) else { throw error(key, ConfigKind.outOfRange(number, range)) }
        return number
    }

    /// A real value in `range` (integers are accepted), or `fallback` when absent.
    public func double(_ key: String, default fallback: Double, range: ClosedRange<Double>) throws(ConfigError) -> Double {
        consumed.insert(key)
        guard let value = table[key] else { return fallback }
        let number: Double
        if value.kind == .float, let d = value.double {
            number = d
        } else if value.kind == .integer, let i = value.int {
            number = Double(i)
        } else {
            throw wrongType(key, value, expected: "a number")
        }
        guard number.isFinite, range.contains(number) else { throw error(key, ConfigKind.outOfRange(number, range)) }
        return number
    }

    /// A boolean value, or `fallback` when absent.
    public func bool(_ key: String, default fallback: Bool) throws(ConfigError) -> Bool {
        consumed.insert(key)
        guard let value = table[key] else { return fallback }
        guard value.kind == .boolean, let flag = value.bool else { throw wrongType(key, value, expected: "true or false") }
        return flag
    }

    /// The value of `key` read as `kind`'s TOML type (an integer is a number too), or nil when absent; a
    /// value of another type is an error. The range and spelling are the key's to check.
    func scalar(_ key: String, as kind: ConfigKind) throws(ConfigError) -> ConfigScalar? {
        consumed.insert(key)
        guard let value = table[key] else { return nil }
        switch kind {
        case .integer:
            guard value.kind == .integer, let number = value.int else { throw wrongType(key, value, expected: "an integer") }
            return .integer(number)
        case .number:
            if value.kind == .float, let number = value.double { return .number(number) }
            if value.kind == .integer, let number = value.int { return .number(Double(number)) }
            throw wrongType(key, value, expected: "a number")
        case .boolean:
            guard value.kind == .boolean, let flag = value.bool else { throw wrongType(key, value, expected: "true or false") }
            return .boolean(flag)
        case .choice, .string:
            guard let text = value.string else { throw wrongType(key, value, expected: "a string") }
            return .string(text)
        }
    }

    /// Every key of this table as a string value (for free-form maps like `[buttons]`), in line order;
    /// a key with another type (sub-tables aside) is passed to `report` and left out.
    public func stringEntries(report: (ConfigError) -> Void) -> [(key: String, value: String, line: Int?)] {
        var entries: [(key: String, value: String, line: Int?)] = []
        for key in table.keys {
            consumed.insert(key)
            guard let value = table[key] else { continue }
            if value.kind == .table { continue }
            guard let text = value.string else {
                report(wrongType(key, value, expected: "a string"))
                continue
            }
            entries.append((key, text, line(of: key)))
        }
        return entries.sorted { ($0.line ?? 0, $0.key) < ($1.line ?? 0, $1.key) }
    }

    /// Marks `key` as read without reading it.
    public func accept(_ key: String) { consumed.insert(key) }

    /// One error for every key (in line order) that no getter asked for, naming the known keys.
    public func unknownKeyErrors() -> [ConfigError] {
        let unknown = table.keys.filter { !consumed.contains($0) }
            .sorted { (line(of: $0) ?? Int.max) < (line(of: $1) ?? Int.max) }
        let known = consumed.sorted().joined(separator: ", ")
        let where_ = path.isEmpty ? "at the top level" : "in [\(path)]"
        return unknown.map { error($0, "unknown key \(where_); known keys: \(known)") }
    }

    private func wrongType(_ key: String, _ value: TOMLNode, expected: String) -> ConfigError {
        error(key, "expected \(expected), found \(Self.typeName(value.kind))")
    }

    private static func typeName(_ kind: TOMLNode.Kind) -> String {
        switch kind {
        case .table: return "a table"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a floating-point number"
        case .boolean: return "a boolean"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date-time"
        case .none: return "no value"
        }
    }
}
