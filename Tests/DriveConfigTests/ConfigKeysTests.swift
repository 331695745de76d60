import DriveConfig
import DriveCore
import Foundation
import XCTest

/// Each config key is declared once (`ConfigKeys`): the loader, the defaults, the flags' values and the
/// generated reference all come from that declaration.
final class ConfigKeysTests: XCTestCase {
    private func load(_ text: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.load(text: text, file: "keys.toml")
    }

    private func errors(_ text: String) -> [ConfigError] {
        do {
            _ = try load(text)
            return []
        } catch {
            return (error as? ConfigErrors)?.errors ?? []
        }
    }

    private static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testEveryKeyIsDeclaredOnce() {
        let paths = ConfigKeys.all.map { "\($0.table).\($0.name)" }
        XCTAssertEqual(paths.count, Set(paths).count, "\(paths)")
        XCTAssertEqual(paths.count, 80)
        for key in ConfigKeys.all {
            XCTAssertFalse(key.doc.isEmpty, key.name)
            XCTAssertFalse(key.doc.contains("\n"), "\(key.name): the doc is one line")
            XCTAssertTrue(ConfigKeys.tables.contains { $0.name == key.table && $0.keys.contains { $0.name == key.name } })
        }
    }

    /// The loader reads every declared key: a wrong type is reported at the key, never as an unknown key.
    func testTheLoaderReadsEveryDeclaredKey() {
        for key in ConfigKeys.all {
            let wrong = key.kind == .boolean ? "\"yes\"" : "true"
            let found = errors("# \(key.name)\n[\(key.table)]\n\(key.name) = \(wrong)\n")
            XCTAssertEqual(found.map(\.key), ["\(key.table).\(key.name)"], "\(found)")
            XCTAssertEqual(found.first?.line, 3)
            XCTAssertTrue(found.first?.message.hasPrefix("expected ") ?? false, "\(found)")
        }
    }

    /// Each key's default, written in a file, is accepted and gives the built-in value.
    func testEveryDefaultIsValidInAFile() throws {
        for key in ConfigKeys.all {
            XCTAssertNoThrow(try load("[\(key.table)]\n\(key.name) = \(key.defaultScalar)\n"), "\(key.table).\(key.name)")
        }
    }

    /// Every range is enforced with the declared bounds, in the loader's wording.
    func testRangesComeFromTheDeclaration() {
        for key in ConfigKeys.all {
            let outside: String
            switch key.kind {
            case .integer(let range): outside = "\(range.upperBound + 1)"
            case .number(let range): outside = "\(range.upperBound + 1)"
            case .choice: outside = "\"neither\""
            default: continue
            }
            let found = errors("[\(key.table)]\n\(key.name) = \(outside)\n")
            XCTAssertEqual(found.count, 1, "\(key.name): \(found)")
            let expected: String
            switch key.kind {
            case .integer(let range): expected = "\(range.upperBound + 1) is out of range (\(range.lowerBound)…\(range.upperBound))"
            case .number(let range):
                expected = "\(range.upperBound + 1) is out of range (\(range.lowerBound)…\(range.upperBound))"
            case .choice(let names):
                expected = "\"neither\" is not one of \(names.map { "\"\($0)\"" }.joined(separator: ", "))"
            default: continue
            }
            XCTAssertEqual(found.first?.message, expected, key.name)
        }
    }

    func testTheDefaultsAreTheDeclarations() throws {
        let config = try CarbridgeConfig.defaults(resolver: LibevdevNames())
        XCTAssertEqual(config.link.url, ConfigKeys.url.defaultValue)
        XCTAssertEqual(config.drive.period, ConfigKeys.period.defaultValue)
        XCTAssertEqual(config.drive.period, .milliseconds(50))
        XCTAssertEqual(config.drive.maxSpeed, ConfigKeys.maxSpeed.defaultValue)
        XCTAssertEqual(config.drive.hysteresisDegrees, ConfigKeys.hysteresis.defaultValue)
        XCTAssertEqual(config.steering.deadzone, ConfigKeys.deadzone.defaultValue)
        XCTAssertEqual(config.steering.tiltAxes, ConfigKeys.tiltAxes.defaultValue)
        XCTAssertEqual(config.gestures.repeatIntervalMilliseconds, ConfigKeys.repeatInterval.defaultValue)
        XCTAssertEqual(ConfigKeys.maxSpeed.defaultScalar, .integer(240))
    }

    /// A flag's value goes through the same declaration as the file's: same checks, same messages.
    func testAFlagValueIsCheckedByTheKeysDeclaration() throws {
        let cases: [(key: any AnyConfigKey, argument: String, file: String)] = [
            (ConfigKeys.maxSpeed, "125", "125"), (ConfigKeys.maxSpeed, "250", "250"), (ConfigKeys.period, "5", "5"),
            (ConfigKeys.idleTimeout, "100000", "100000"), (ConfigKeys.idleTimeout, "-1", "-1"),
            (ConfigKeys.terminator, "cr", "\"cr\""), (ConfigKeys.url, "tcp://nohost", "\"tcp://nohost\""),
            (ConfigKeys.listen, "8080", "\"8080\""),
        ]
        for (key, argument, value) in cases {
            let fileMessage = errors("[\(key.table)]\n\(key.name) = \(value)\n").first?.message
            XCTAssertNotNil(fileMessage, argument)
            XCTAssertEqual(flagMessage(key, argument), fileMessage, "\(key.name) \(argument)")
        }
        XCTAssertEqual(flagMessage(ConfigKeys.maxSpeed, "fast"), "\"fast\" is not an integer")
        XCTAssertEqual(flagMessage(ConfigKeys.idleTimeout, "nan"), "nan is out of range (0.0…86400.0)")
    }

    private func flagMessage(_ key: any AnyConfigKey, _ argument: String) -> String? {
        func message<Value>(_ key: ConfigKey<Value>) -> String? {
            do {
                _ = try key.override(fromArgument: argument)
                return nil
            } catch {
                return error.message
            }
        }
        switch key {
        case let key as ConfigKey<Int>: return message(key)
        case let key as ConfigKey<Duration>: return message(key)
        case let key as ConfigKey<Duration?>: return message(key)
        case let key as ConfigKey<FrameTerminator>: return message(key)
        case let key as ConfigKey<String>: return message(key)
        case let key as ConfigKey<ListenAddress?>: return message(key)
        default: XCTFail("no flag test for \(key.name)"); return nil
        }
    }

    /// `run --idle-timeout` truncated to the millisecond while the file rounded; both round now.
    func testAFlagAndAFileGiveTheSameValue() throws {
        var config = try load("")
        try ConfigKeys.idleTimeout.override(fromArgument: "0.0015").apply(to: &config)
        XCTAssertEqual(config.drive.idleTimeout, .milliseconds(2))
        XCTAssertEqual(try load("[drive]\nidle_timeout_s = 0.0015\n").drive.idleTimeout, .milliseconds(2))
        try ConfigKeys.idleTimeout.override(fromArgument: "0").apply(to: &config)
        XCTAssertNil(config.drive.idleTimeout)
        try ConfigKeys.terminator.override(fromArgument: "crlf").apply(to: &config)
        XCTAssertEqual(config.link.terminator, .carriageReturnLineFeed)
        try ConfigKeys.period.override(fromArgument: "40").apply(to: &config)
        XCTAssertEqual(config.drive.period, .milliseconds(40))
        try ConfigKeys.listen.override(fromArgument: "127.0.0.1:8080").apply(to: &config)
        XCTAssertEqual(config.dashboard.listen, ListenAddress(host: "127.0.0.1", port: 8080))
    }

    func testFlagHelpSaysTheRangeAndDefault() {
        XCTAssertEqual(
            ConfigKeys.maxSpeed.flagHelp, "Speed cap for Speed+, a multiple of 10 (10…240; default 240); overrides [drive] max_speed.")
        XCTAssertEqual(
            ConfigKeys.terminator.flagHelp.hasSuffix("(\"lf\", \"crlf\", \"none\"; default \"lf\"); overrides [link] terminator."),
            true, ConfigKeys.terminator.flagHelp)
    }

    func testUnknownKeysListTheDeclaredKeys() {
        XCTAssertEqual(errors("[link]\ncolour = 1\n").first?.message,
                       "unknown key in [link]; known keys: ble_notify, ble_service, ble_write, connect_timeout_ms, max_in_flight, stall_timeout_ms, terminator, url")
    }

    // MARK: The generated reference

    /// `config/carbridge.toml` is `carbridge config-reference --format toml`: regenerate it after changing a key.
    func testTheCommittedReferenceConfigIsTheGeneratedOne() throws {
        let committed = try String(
            contentsOf: Self.repositoryRoot.appendingPathComponent("config/carbridge.toml"), encoding: .utf8)
        XCTAssertEqual(committed, ConfigReference.toml(),
                       "config/carbridge.toml is out of date: swift run carbridge config-reference --format toml > config/carbridge.toml")
    }

    func testTheReferenceConfigSetsEveryKeyToItsDefault() throws {
        let text = ConfigReference.toml()
        let config = try load(text)
        let lines = text.split(separator: "\n").map(String.init)
        for key in ConfigKeys.all {
            XCTAssertNotNil(config.lines["\(key.table).\(key.name)"], "\(key.table).\(key.name) missing")
            XCTAssertTrue(lines.contains("\(key.name) = \(key.defaultScalar)"), key.name)
            if let allowed = key.kind.allowedText {
                XCTAssertTrue(text.contains(allowed), "\(key.name): \(allowed)")
            }
            XCTAssertTrue(lines.contains("# \(key.doc)"), key.doc)
        }
        XCTAssertEqual(config.buttons, CarbridgeConfig.defaultButtons.enumerated().map { index, binding in
            var binding = binding
            binding.line = config.buttons[index].line
            return binding
        })
        XCTAssertEqual(config.drive.maxSpeed, 240)
        XCTAssertNil(config.dashboard.listen)
    }

    func testTheManPageHasAnEntryPerKey() {
        let page = ConfigReference.manPage()
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.first, ".TH CARBRIDGE.TOML 5 \"\" \"carbridge\" \"File Formats\"")
        for table in ConfigKeys.tables {
            XCTAssertTrue(lines.contains(".SH [\(table.name.uppercased())]"), table.name)
        }
        for key in ConfigKeys.all {
            let name = key.name.replacingOccurrences(of: "-", with: "\\-")
            // Within the key's own table: `source`, `deadzone` and `neutral_deg` are in more than one.
            let start = lines.firstIndex(of: ".SH [\(key.table.uppercased())]") ?? 0
            let end = lines[(start + 1)...].firstIndex { $0.hasPrefix(".SH ") } ?? lines.count
            let entries = lines.indices.filter { (start..<end).contains($0) && lines[$0].hasPrefix("\\fB\(name)\\fR (") }
            let entry = entries.first.map { lines[$0] } ?? ""
            XCTAssertEqual(entries.count, 1, key.name)
            XCTAssertTrue(entries.allSatisfy { $0 > 0 && lines[$0 - 1] == ".TP" }, key.name)
            XCTAssertTrue(entry.contains("default "), entry)
        }
        // No text line may start a request by accident.
        for line in lines where line.hasPrefix(".") || line.hasPrefix("'") {
            XCTAssertNotNil(line.range(of: #"^\.(TH|SH|SS|TP|PP|B|I|br|nf|fi)( |$)"#, options: .regularExpression), line)
        }
    }

    func testRoffEscapes() {
        XCTAssertEqual(ConfigReference.roff(#"a\b-c"#), #"a\eb\-c"#)
        XCTAssertEqual(ConfigReference.roff(".x"), #"\&.x"#)
    }
}
