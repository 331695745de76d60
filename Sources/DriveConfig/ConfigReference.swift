/// The documentation of `carbridge.toml`, rendered from the key declarations (`ConfigKeys.tables`): the
/// commented reference config (`config/carbridge.toml`, every key at its default) and the
/// `carbridge.toml(5)` man page. `carbridge config-reference --format toml|man` prints them.
public enum ConfigReference {
    /// The commented reference config: every table and key with its doc, type, range and default, set to
    /// the default; loading it gives the built-in defaults.
    public static func toml(tables: [ConfigTableDeclaration] = ConfigKeys.tables) -> String {
        var lines = [
            "# carbridge.toml — every option with its default.",
            "# carbridge reads this file with `carbridge run --config FILE`; command-line flags override it.",
            "# Check a file without running: `carbridge check-config FILE`.",
            "# Unknown keys and wrong types are errors (reported as file:line), so typos never pass silently.",
            "# Generated from the key declarations (Sources/DriveConfig/ConfigKeys.swift) by",
            "# `carbridge config-reference --format toml`: change those, then regenerate this file.",
        ]
        for table in tables {
            lines += ["", "[\(table.name)]", "# \(table.doc)"]
            for key in table.keys {
                lines.append("")
                lines += ([key.doc] + key.details).map { "# \($0)" }
                lines.append("# \(facts(key)).")
                lines.append("\(key.name) = \(key.defaultScalar)")
            }
            if let bindings = table.bindings {
                lines.append("# Actions: \(bindings.actions.joined(separator: ", ")).")
                lines.append("# Without a [\(table.name)] table this layout is used:")
                lines += bindings.defaults.map { "\($0.button) = \(ConfigScalar.string($0.action.rawValue))" }
                lines += ["", "[\(table.name).\(bindings.longPressTable)]", "# \(bindings.longPressDoc)"]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `carbridge.toml(5)` man page (roff): one entry per key with its type, range, default and doc.
    public static func manPage(tables: [ConfigTableDeclaration] = ConfigKeys.tables) -> String {
        var lines = [
            ".TH CARBRIDGE.TOML 5 \"\" \"carbridge\" \"File Formats\"",
            ".SH NAME",
            "carbridge.toml \\- configuration file of carbridge(1)",
            ".SH SYNOPSIS",
            ".B carbridge run \\-\\-config",
            ".I FILE",
            ".br",
            ".B carbridge check\\-config",
            ".I FILE",
            ".SH DESCRIPTION",
            roff("A TOML file of the tables below; every key is optional and has the default shown. Command-line flags of "
                + "carbridge run override the file. Unknown tables and keys, wrong types and values out of range are errors, "
                + "each reported as file:line: key: message, all of them in file order (carbridge check-config FILE)."),
        ]
        for table in tables {
            lines += [".SH [\(table.name.uppercased())]", roff(table.doc)]
            for key in table.keys {
                lines += [".TP", "\\fB\(roff(key.name))\\fR (\(roff(facts(key))))", roff(key.doc)]
                lines += block(key.details)
            }
            if let bindings = table.bindings {
                lines += [
                    ".PP", roff("Actions: \(bindings.actions.joined(separator: ", ")). Without a [\(table.name)] table:"),
                    ".PP", ".nf",
                ]
                lines += bindings.defaults.map { roff("\($0.button) = \(ConfigScalar.string($0.action.rawValue))") }
                lines += [".fi", ".SS [\(table.name).\(bindings.longPressTable)]", roff(bindings.longPressDoc)]
            }
        }
        lines += [
            ".SH FILES", ".I config/carbridge.toml", roff("in the source tree: this reference as a config file, every key at its default."),
            ".SH SEE ALSO", "carbridge(1)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `integer, 100…120000; default 5000`, `one of "lf", "crlf", "none"; default "lf"`, `string; default "sim"`.
    private static func facts(_ key: any AnyConfigKey) -> String {
        let type: String
        switch key.kind {
        case .choice: type = "one of \(key.kind.allowedText ?? "")"
        case .integer, .number: type = "\(key.kind.typeName), \(key.kind.allowedText ?? "")"
        case .boolean, .string: type = key.kind.typeName
        }
        return "\(type); default \(key.defaultScalar)"
    }

    /// Detail lines: kept as lines (`.nf`) when they are a table of forms (indented), a paragraph otherwise.
    private static func block(_ details: [String]) -> [String] {
        guard !details.isEmpty else { return [] }
        if details.contains(where: { $0.hasPrefix(" ") }) {
            return [".br", ".nf"] + details.map(roff) + [".fi"]
        }
        return [".br", roff(details.joined(separator: " "))]
    }

    /// Text escaped for roff: backslashes and hyphens, and a line that would start a request.
    public static func roff(_ text: String) -> String {
        var escaped = ""
        for c in text {
            switch c {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            default: escaped.append(c)
            }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
