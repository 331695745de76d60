import DriveCore
import DriveConfig
import XCTest

final class CarbridgeConfigTests: XCTestCase {
    private func parse(_ text: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.parse(text: text, file: "test.toml")
    }

    private func assertError(_ text: String, line: Int?, key: String?, contains fragment: String,
                             file: StaticString = #filePath, sourceLine: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: sourceLine) { error in
            guard let error = error as? ConfigError else {
                return XCTFail("not a ConfigError: \(error)", file: file, line: sourceLine)
            }
            XCTAssertEqual(error.file, "test.toml", file: file, line: sourceLine)
            XCTAssertEqual(error.line, line, "\(error)", file: file, line: sourceLine)
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: sourceLine)
            XCTAssertTrue(error.message.contains(fragment), "\(error)", file: file, line: sourceLine)
        }
    }

    func testEmptyFileGivesDefaults() throws {
        let config = try parse("")
        XCTAssertEqual(config.link.url, "sim")
        XCTAssertEqual(config.link.terminator, .lineFeed)
        XCTAssertEqual(config.drive.period, .milliseconds(50))
        XCTAssertEqual(config.drive.maxSpeed, 240)
        XCTAssertNil(config.drive.idleTimeout)
        XCTAssertEqual(config.drive.onInputLost, .stop)
        XCTAssertEqual(config.keyboard.steerStepDegrees, 20)
        XCTAssertFalse(config.drive.deadmanRequired)
        XCTAssertEqual(config.buttons, CarbridgeConfig.defaultButtons)
    }

    func testValuesAreRead() throws {
        let config = try parse("""
            [link]
            url = "tcp://127.0.0.1:9000"
            terminator = "crlf"
            [drive]
            period_ms = 40
            hysteresis_deg = 0
            max_speed = 120
            idle_timeout_s = 30
            on_input_lost = "engine-off"
            [buttons]
            BTN_START = "engine"
            BTN_TL2 = "deadman"
            [buttons.long_press]
            BTN_SELECT = "calibrate"
            """)
        XCTAssertEqual(config.link.url, "tcp://127.0.0.1:9000")
        XCTAssertEqual(config.link.terminator, .carriageReturnLineFeed)
        XCTAssertEqual(config.drive.period, .milliseconds(40))
        XCTAssertEqual(config.drive.hysteresisDegrees, 0)
        XCTAssertEqual(config.drive.maxSpeed, 120)
        XCTAssertEqual(config.drive.idleTimeout, .seconds(30))
        XCTAssertEqual(config.drive.onInputLost, .engineOff)
        XCTAssertTrue(config.drive.deadmanRequired)
        XCTAssertEqual(config.buttons.map(\.button), ["BTN_START", "BTN_TL2"])
        XCTAssertEqual(config.buttons.map(\.line), [11, 12])
        XCTAssertEqual(config.longPressButtons, [.init(button: "BTN_SELECT", action: .calibrate, line: 14)])
    }

    func testUnknownKeyNamesFileLineAndKey() {
        assertError("[drive]\nperiod_ms = 50\nmax_sped = 100\n", line: 3, key: "drive.max_sped", contains: "unknown key")
    }

    func testUnknownTable() {
        assertError("# hi\n\n[drvie]\nx = 1\n", line: 3, key: "drvie", contains: "unknown key at the top level")
    }

    func testWrongTypeIsReported() {
        assertError("[drive]\n\nmax_speed = \"fast\"\n", line: 3, key: "drive.max_speed",
                    contains: "expected an integer, found a string")
        assertError("[keyboard]\nenabled = 1\n", line: 2, key: "keyboard.enabled", contains: "expected true or false")
    }

    func testOutOfRangeAndNotMultipleOfTen() {
        assertError("[drive]\nmax_speed = 250\n", line: 2, key: "drive.max_speed", contains: "out of range")
        assertError("[drive]\nmax_speed = 125\n", line: 2, key: "drive.max_speed", contains: "multiple of 10")
        assertError("[drive]\nperiod_ms = 0\n", line: 2, key: "drive.period_ms", contains: "out of range")
    }

    func testBadEnumSpelling() {
        assertError("[drive]\non_input_lost = \"halt\"\n", line: 2, key: "drive.on_input_lost",
                    contains: "\"stop\", \"engine-off\"")
        assertError("[link]\nterminator = \"cr\"\n", line: 2, key: "link.terminator", contains: "\"lf\"")
    }

    func testUnknownActionListsActions() {
        assertError("[buttons]\nBTN_SOUTH = \"jump\"\n", line: 2, key: "buttons.BTN_SOUTH", contains: "speed_up")
    }

    func testBadTiltAxes() {
        assertError("[steering]\ntilt_axes = \"x,x\"\n", line: 2, key: "steering.tilt_axes", contains: "two different axes")
    }

    func testSyntaxErrorHasLine() {
        XCTAssertThrowsError(try parse("[drive]\nmax_speed = = 3\n")) { error in
            let error = error as? ConfigError
            XCTAssertEqual(error?.line, 2)
            XCTAssertTrue(error?.message.contains("TOML syntax error") ?? false)
        }
    }

    /// Regression: check-config accepted link URLs that `carbridge run` (LinkURL(parsing:)) then rejected.
    func testLinkURLIsCheckedWithTheParserRunUses() throws {
        assertError("[link]\nurl = \"tcp://nohost\"\n", line: 2, key: "link.url", contains: "needs a port")
        assertError("# car\n[link]\n\nurl = \"bluetooth://car\"\n", line: 4, key: "link.url", contains: "unknown scheme")
        assertError("[link]\nurl = \"rfcomm://98:D3:31:F5:2A:11/31\"\n", line: 2, key: "link.url", contains: "1 to 30")
        assertError("[link]\nurl = \"serial:///dev/rfcomm0?baud=1200\"\n", line: 2, key: "link.url", contains: "not supported")
        assertError("[link]\nurl = \"car\"\n", line: 2, key: "link.url", contains: "no scheme")
        XCTAssertThrowsError(try parse("[link]\nurl = \"tcp://nohost\"\n")) { error in
            XCTAssertTrue("\(error)".hasPrefix("test.toml:2: link.url: invalid link \"tcp://nohost\""), "\(error)")
        }
        for url in ["sim", "stdout", "tcp://127.0.0.1:7000", "tcp://[::1]:7000", "serial:///dev/ttyUSB0?baud=115200",
                    "rfcomm://98:d3:31:f5:2a:11"] {
            XCTAssertEqual(try parse("[link]\nurl = \"\(url)\"\n").link.url, url)
        }
    }

    /// Regression (found by FuzzConfig): a table header whose name starts with anything but a bare-key
    /// character or a quote made toml++ abort the process on an assertion (`carbridge check-config` died
    /// with SIGABRT); a NUL byte silently ended the file for toml++.
    func testTableNamesTOMLKitCannotTakeAreSyntaxErrors() throws {
        for (text, line) in [("[é]\n", 1), ("# x\n[link]\nurl = \"sim\"\n[\u{FFFD}buttons]\n", 4), ("[\n", 1), ("[[ #]]\n", 1),
                             ("[\r\n", 1), ("\u{FEFF}[é]", 1), ("  \t[ \t+x]", 1), ("[[ [x]]]\n", 1),
                             ("[link]\nurl = \"sim\"\u{0}garbage\n", 2)] {
            XCTAssertThrowsError(try parse(text), text.debugDescription) { error in
                guard let error = error as? ConfigError else { return XCTFail("\(text.debugDescription): \(error)") }
                XCTAssertEqual(error.line, line, "\(text.debugDescription): \(error)")
                XCTAssertTrue(error.message.hasPrefix("TOML syntax error"), "\(error)")
            }
        }
        // Not headers: nested arrays, and brackets inside strings, comments and multi-line strings.
        for text in ["x = [\n[+1],\n]\n", "s = \"\"\"\n[é]\n\"\"\"\n", "# [é]\n", "t = { a = [\n{b=1}] }\n"] {
            do {
                _ = try parse(text)
            } catch {
                let message = (error as? ConfigError)?.message ?? "\(error)"
                XCTAssertFalse(message.contains("a table name must start"), "\(text.debugDescription): \(message)")
            }
        }
        XCTAssertEqual(try parse("[ \"link\" ]\nurl = \"stdout\"\n").link.url, "stdout")
        XCTAssertEqual(try parse("\u{FEFF}[link]\r\nurl = 'stdout'\r\n").link.url, "stdout")
    }

    /// A value's line in a file with Windows line ends is its line, as with `\n` (the line index walks
    /// bytes; as `Character`s, `\r\n` was one grapheme and the whole file one line).
    func testLineNumbersOfAFileWithCRLFLineEnds() throws {
        for newline in ["\n", "\r\n"] {
            let text = ["# a car", "[link]", "url = \"sim\"", "", "[drive]", "period_ms = 5"].joined(separator: newline) + newline
            XCTAssertThrowsError(try parse(text), newline.debugDescription) { error in
                let errors = (error as? ConfigErrors)?.errors ?? [error as? ConfigError].compactMap { $0 }
                XCTAssertEqual(errors.map(\.line), [6], "\(newline.debugDescription): \(error)")
                XCTAssertEqual(errors.first?.key, "drive.period_ms", "\(error)")
            }
        }
    }

    func testShippedConfigFilesParse() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config")
        let files = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".toml") }
        XCTAssertFalse(files.isEmpty)
        for name in files {
            let text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
            // Exactly what `carbridge check-config` does: parse and resolve every evdev name, all problems.
            XCTAssertNoThrow(try CarbridgeConfig.load(text: text, file: name), name)
        }
    }
}
