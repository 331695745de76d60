import DriveConfig
import DriveCore
import XCTest

/// `[car]`: `low_battery`.
final class CarConfigTests: XCTestCase {
    private func parse(_ text: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.parse(text: text, file: "car.toml")
    }

    func testOffByDefaultOrEmpty() throws {
        XCTAssertNil(try parse("").car.lowBattery)
        XCTAssertNil(try parse("[car]\nlow_battery = \"\"\n").car.lowBattery)
    }

    func testTheRuleIsRead() throws {
        XCTAssertEqual(try parse("[car]\nlow_battery = \"BAT<6.8\"\n").car.lowBattery, LowBatteryRule(key: "BAT", threshold: 6.8))
        XCTAssertEqual(try parse("[car]\nlow_battery = \"PCT < 20\"\n").car.lowBattery, LowBatteryRule(key: "PCT", threshold: 20))
    }

    func testBadSyntaxSaysWhy() {
        let cases: [(String, String)] = [
            ("low_battery = \"BAT>6.8\"", "is not KEY<NUMBER"),
            ("low_battery = \"BAT<low\"", "\"low\" after < is not a number"),
            ("low_battery = \"9V<6.8\"", "\"9V\" is not a status key"),
            ("low_battery = 6.8", "expected a string"),
        ]
        for (line, fragment) in cases {
            XCTAssertThrowsError(try parse("# car\n[car]\n\(line)\n"), line) { error in
                guard let error = error as? ConfigError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.file, "car.toml")
                XCTAssertEqual(error.line, 3, "\(error)")
                XCTAssertEqual(error.key, "car.low_battery", "\(error)")
                XCTAssertTrue(error.message.contains(fragment), "\(line): \(error)")
            }
        }
    }
}
