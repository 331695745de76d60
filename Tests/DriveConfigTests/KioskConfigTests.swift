import DriveConfig
import XCTest

/// `[kiosk]`: `session_limit_s`.
final class KioskConfigTests: XCTestCase {
    private func parse(_ text: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.parse(text: text, file: "kiosk.toml")
    }

    func testNoLimitByDefaultOrWithZero() throws {
        XCTAssertNil(try parse("").kiosk.sessionLimit)
        XCTAssertNil(try parse("[kiosk]\n").kiosk.sessionLimit)
        XCTAssertNil(try parse("[kiosk]\nsession_limit_s = 0\n").kiosk.sessionLimit)
    }

    func testTheLimitIsRead() throws {
        XCTAssertEqual(try parse("[kiosk]\nsession_limit_s = 180\n").kiosk.sessionLimit, .seconds(180))
        XCTAssertEqual(try parse("[kiosk]\nsession_limit_s = 1.5\n").kiosk.sessionLimit, .milliseconds(1500))
        XCTAssertEqual(try parse("[kiosk]\nsession_limit_s = 86400\n").kiosk.sessionLimit, .seconds(86_400))
    }

    func testBadValuesNameTheFileLineAndKey() {
        let cases: [(String, String)] = [
            ("session_limit_s = -5", "out of range"),
            ("session_limit_s = 100000", "out of range"),
            ("session_limit_s = 0.5", "too short"),
            ("session_limit_s = \"3 min\"", "expected a number"),
            ("session_limt_s = 60", "unknown key"),
        ]
        for (line, fragment) in cases {
            XCTAssertThrowsError(try parse("# kiosk\n[kiosk]\n\(line)\n"), line) { error in
                guard let error = error as? ConfigError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.file, "kiosk.toml")
                XCTAssertEqual(error.line, 3, "\(error)")
                XCTAssertTrue(error.key?.hasPrefix("kiosk.session_lim") ?? false, "\(error)")
                XCTAssertTrue(error.message.contains(fragment), "\(line): \(error)")
            }
        }
    }

    func testAKioskThatIsNotATableIsAnError() {
        XCTAssertThrowsError(try parse("kiosk = 5\n")) { error in
            XCTAssertEqual((error as? ConfigError)?.line, 1, "\(error)")
        }
    }
}
