import DriveConfig
import XCTest

/// The config file's TOML goes through toml++ (`CTOMLReader`) instead of TOMLKit: the same parser, read
/// without Foundation. Every expected message here is what the TOMLKit build printed for the same file
/// (`carbridge check-config` at commit 12c1eb3), so the messages users see did not change.
final class TOMLReaderTests: XCTestCase {
    private func errors(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        do {
            _ = try CarbridgeConfig.load(text: text, file: "my.toml")
            XCTFail("no error", file: file, line: line)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testSyntaxErrorsKeepTomlPlusPlusWordsAndLine() {
        XCTAssertEqual(errors("[link]\nurl = \"sim\"\nmax_in_flight = \n"), [
            "my.toml:3: TOML syntax error: Error while parsing key-value pair: expected value, saw '\\n'",
        ])
        XCTAssertEqual(errors("[drive]\nmax_speed = 100\n[drive]\nperiod_ms = 50\n"), [
            "my.toml:3: TOML syntax error: Error while parsing table header: cannot redefine existing table 'drive'",
        ])
        XCTAssertEqual(errors("a = \"x\\u0000y\"\n[link\n"), [
            "my.toml:2: TOML syntax error: Error while parsing table header: expected ']', saw '\\n'",
        ])
        XCTAssertEqual(errors("x = { a = 1, b = \n"), [
            "my.toml:1: TOML syntax error: Error while parsing key-value pair: expected value, saw '\\n'",
        ])
    }

    func testEveryTOMLTypeIsNamedInWrongTypeErrors() {
        let text = """
            [drive]
            max_speed = 1979-05-27
            period_ms = 07:32:00
            [link]
            url = 1979-05-27T07:32:00Z
            stall_timeout_ms = [1, 2]
            terminator = 1.5
            [buttons]
            BTN_START = "engine"
            BTN_TR = 3
            BTN_TL = true
            BTN_NORTH = { a = 1 }
            """
        XCTAssertEqual(errors(text), [
            "my.toml:2: drive.max_speed: expected an integer, found a date",
            "my.toml:3: drive.period_ms: expected an integer, found a time",
            "my.toml:5: link.url: expected a string, found a date-time",
            "my.toml:6: link.stall_timeout_ms: expected an integer, found an array",
            "my.toml:7: link.terminator: expected a string, found a floating-point number",
            "my.toml:10: buttons.BTN_TR: expected a string, found an integer",
            "my.toml:11: buttons.BTN_TL: expected a string, found a boolean",
        ])
    }

    /// A `\u0000` escape ends a string value there, as it did when TOMLKit handed values over as C strings.
    func testANulEscapeEndsTheString() throws {
        let config = try CarbridgeConfig.load(text: "[link]\nurl = \"tcp://h:1\\u0000zzz\"\n", file: "my.toml")
        XCTAssertEqual(config.link.url, "tcp://h:1")
    }

    /// Quoted keys with dots and non-ASCII bytes come back whole, so they are looked up and reported by
    /// their real name.
    func testQuotedKeysComeBackWhole() {
        let hint = "(use an evdev name such as \"BTN_SOUTH\" or \"KEY_SPACE\", or a hat direction such as \"ABS_HAT0X-\")"
        XCTAssertEqual(errors("[buttons]\n\"a.b\" = \"f1\"\n\"é\" = \"f2\"\n"), [
            "my.toml:2: buttons.a.b: unknown button name \"a.b\" \(hint)",
            "my.toml:3: buttons.é: unknown button name \"é\" \(hint)",
        ])
    }

    /// Integers keep their 64 bits and floats their value (NaN included): the range check sees what the
    /// file says; a float TOML cannot represent is toml++'s syntax error.
    func testNumbersKeepTheirValue() {
        XCTAssertEqual(errors("[drive]\nmax_speed = 9223372036854775807\n"), [
            "my.toml:2: drive.max_speed: 9223372036854775807 is out of range (10…240)",
        ])
        XCTAssertEqual(errors("[steering]\nsensitivity = nan\n"), [
            "my.toml:2: steering.sensitivity: nan is out of range (0.05…20.0)",
        ])
        XCTAssertEqual(errors("[steering]\nsensitivity = 1e400\n"), [
            "my.toml:2: TOML syntax error: Error while parsing floating-point: '1e400' could not be interpreted as a value",
        ])
    }
}
