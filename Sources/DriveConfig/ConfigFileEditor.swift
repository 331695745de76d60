import DriveInputModel
import DriveMapping
import Glibc

/// Changes one `key = value` of a TOML config file in place, keeping every other line and
/// comment as it was (used to save the calibrated tilt neutral).
public enum ConfigFileEditor {
    /// Sets `[table] key = value` (value already in TOML syntax) in `text`: replaces the key's line,
    /// or adds it right after the table header, or appends the table.
    public static func set(in text: String, table: String, key: String, value: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var current = ""
        var headerIndex: Int?
        for index in lines.indices {
            let trimmed = TextFile.trimming(lines[index], TextFile.isWhitespace)
            if trimmed.hasPrefix("[") {
                current = TextFile.trimming(trimmed) { $0 == "[" || $0 == "]" || $0 == " " }
                if current == table && headerIndex == nil { headerIndex = index }
                continue
            }
            guard current == table, let equals = trimmed.firstIndex(of: "="), !trimmed.hasPrefix("#") else { continue }
            let name = TextFile.trimming(TextFile.trimming(trimmed[..<equals], TextFile.isWhitespace)) { $0 == "\"" || $0 == "'" }
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
        let text = try TextFile.read(path)
        let updated = set(in: text, table: table, key: key, value: value)
        try TextFile.writeAtomically(updated, to: path)
    }

    /// A calibrated tilt neutral as it is saved: rounded to 0.1°.
    public static func roundedNeutral(_ degrees: Double) -> Double {
        (degrees * 10).rounded() / 10
    }

    /// Saves a calibrated tilt neutral as `[steering] neutral_deg` in the config file at `path` (what
    /// `carbridge calibrate`, the monitor's and `run`'s calibrate button do): rounded to 0.1°, the key's line
    /// replaced (or added) keeping every other line and comment, and the edited text validated as a whole
    /// config (with `resolver` for the evdev names) before it replaces the file atomically. A file that would
    /// not be valid afterwards is left as it was. Returns the value saved. `neutral` is the key: the
    /// roll's (`[steering] neutral_deg`) or the tilt throttle's pitch (`[throttle] neutral_deg`).
    @discardableResult
    public static func saveNeutral(
        _ degrees: Double, file path: String, resolver: any EventCodeResolver,
        key neutral: ConfigKey<Double> = ConfigKeys.neutral
    ) throws(ConfigErrors) -> Double {
        let rounded = roundedNeutral(degrees)
        let key = neutral.path
        guard rounded.isFinite else {
            throw ConfigErrors([ConfigError(file: path, line: nil, key: key, message: "\(degrees) is not a number of degrees")])
        }
        let text: String
        do {
            text = try read(path)
        } catch {
            throw ConfigErrors([error])
        }
        let edited = set(in: text, table: neutral.table, key: neutral.name, value: "\(rounded)")
        let config = try CarbridgeConfig.load(text: edited, file: path, resolver: resolver)
        guard config[keyPath: neutral.keyPath] == rounded else {
            throw ConfigErrors([ConfigError(
                file: path, line: config.lines[key], key: key,
                message: "the file was not changed: editing it did not set \(key) = \(rounded); set it by hand")])
        }
        do {
            try TextFile.writeAtomically(edited, to: path)
        } catch {
            throw ConfigErrors([ConfigError(
                file: path, line: nil, key: nil, message: "cannot write the config file (\(error.reason))")])
        }
        return rounded
    }

    /// Saves the car's link as `[link] url` in the config file at `path` (the dashboard's Bluetooth
    /// search: `rfcomm://ADDRESS`), like `saveNeutral`: the key's line replaced (or added, with the
    /// `[link]` table if there is none) keeping every other line and comment, the edited text validated
    /// as a whole config (with `resolver`) before it replaces the file atomically; a file that would not
    /// be valid afterwards is left as it was (its problems as file:line errors). A run without a config
    /// file (`path` nil) has nowhere to save it: that is an error with the reason. Returns the path.
    @discardableResult
    public static func saveLinkURL(
        _ url: String, file path: String?, resolver: any EventCodeResolver
    ) throws(ConfigErrors) -> String {
        let key = ConfigKeys.url.path
        guard let path else {
            throw ConfigErrors([ConfigError(
                file: "(no config file)", line: nil, key: key,
                message: "this run was started without a config file: nowhere to save \(url) (start it with --config FILE)")])
        }
        let text: String
        do {
            text = try read(path)
        } catch {
            throw ConfigErrors([error])
        }
        var literal = ""
        TOMLString.append(url, to: &literal)
        let edited = set(in: text, table: ConfigKeys.url.table, key: ConfigKeys.url.name, value: literal)
        let config = try CarbridgeConfig.load(text: edited, file: path, resolver: resolver)
        guard config.link.url == url else {
            throw ConfigErrors([ConfigError(
                file: path, line: config.lines[key], key: key,
                message: "the file was not changed: editing it did not set url = \"\(url)\"; set it by hand")])
        }
        do {
            try TextFile.writeAtomically(edited, to: path)
        } catch {
            throw ConfigErrors([ConfigError(
                file: path, line: nil, key: nil, message: "cannot write the config file (\(error.reason))")])
        }
        return path
    }

    /// The text of the config file at `path`; an unreadable file is a `ConfigError` naming it.
    static func read(_ path: String) throws(ConfigError) -> String {
        do {
            return try TextFile.read(path)
        } catch {
            throw ConfigError(file: path, line: nil, key: nil, message: "cannot read the config file (\(error.reason))")
        }
    }
}

/// A TOML basic string literal (quotes, backslashes and control characters escaped).
enum TOMLString {
    static func append(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}
