import Foundation

/// Changes one `key = value` of a TOML config file in place, keeping every other line and
/// comment as it was (used to save the calibrated tilt neutral).
public enum ConfigFileEditor {
    /// Sets `[table] key = value` (value already in TOML syntax) in `text`: replaces the key's line,
    /// or adds it right after the table header, or appends the table.
    public static func set(in text: String, table: String, key: String, value: String) -> String {
        var lines = text.components(separatedBy: "\n")
        var current = ""
        var headerIndex: Int?
        for index in lines.indices {
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                current = trimmed.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
                if current == table && headerIndex == nil { headerIndex = index }
                continue
            }
            guard current == table, let equals = trimmed.firstIndex(of: "="), !trimmed.hasPrefix("#") else { continue }
            let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            if name == key {
                let indent = String(lines[index].prefix { $0 == " " || $0 == "\t" })
                lines[index] = "\(indent)\(key) = \(value)"
                return lines.joined(separator: "\n")
            }
        }
        if let headerIndex {
            lines.insert("\(key) = \(value)", at: headerIndex + 1)
            return lines.joined(separator: "\n")
        }
        var result = text
        if !result.isEmpty && !result.hasSuffix("\n") { result += "\n" }
        return result + "\n[\(table)]\n\(key) = \(value)\n"
    }

    /// Sets the key in the file at `path`, writing atomically (a temporary file renamed over it).
    public static func set(file path: String, table: String, key: String, value: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let updated = set(in: text, table: table, key: key, value: value)
        try updated.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
