import DriveConfig
import DriveInputModel
import XCTest

/// `[feedback]`'s pad lights and battery: `lights`, the `light_…` colours and `pad_low_battery`.
final class FeedbackLightsConfigTests: XCTestCase {
    private func parse(_ text: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.parse(text: text, file: "lights.toml")
    }

    func testTheDefaults() throws {
        let feedback = try parse("").feedback
        XCTAssertTrue(feedback.lights)
        XCTAssertEqual(feedback.padLowBattery, 20)
        XCTAssertEqual(
            [feedback.lightLinkDown, feedback.lightInputRefused, feedback.lightBatteryLow, feedback.lightDriving,
             feedback.lightStopped, feedback.lightEngineOff].map(\.description),
            ["#ff0000", "#ff00ff", "#ff6000", "#00ff00", "#006060", "#303030"])
    }

    func testColoursAndTheThresholdAreRead() throws {
        let feedback = try parse("""
            [feedback]
            lights = false
            light_driving = "#00FF7f"
            light_link_down = "#800000"
            pad_low_battery = 0
            """).feedback
        XCTAssertFalse(feedback.lights)
        XCTAssertEqual(feedback.lightDriving, LightColour(red: 0, green: 255, blue: 127))
        XCTAssertEqual(feedback.lightLinkDown, LightColour(red: 128, green: 0, blue: 0))
        XCTAssertEqual(feedback.padLowBattery, 0)
    }

    func testBadValuesSayWhyAtTheirLine() {
        let cases: [(String, String, String)] = [
            ("light_driving = \"green\"", "feedback.light_driving",
             ##""green" is not a colour: write "#rrggbb", six hex digits (e.g. "#ff8000" for orange)"##),
            ("light_stopped = \"#0f0\"", "feedback.light_stopped",
             ##""#0f0" is not a colour: write "#rrggbb", six hex digits (e.g. "#ff8000" for orange)"##),
            ("light_engine_off = \"#30303g\"", "feedback.light_engine_off",
             ##""#30303g" is not a colour: write "#rrggbb", six hex digits (e.g. "#ff8000" for orange)"##),
            ("light_battery_low = 0xff6000", "feedback.light_battery_low", "expected a string"),
            ("pad_low_battery = 96", "feedback.pad_low_battery", "out of range"),
            ("lights = \"yes\"", "feedback.lights", "expected true or false"),
        ]
        for (line, key, message) in cases {
            XCTAssertThrowsError(try parse("# pad\n[feedback]\n\(line)\n"), line) { error in
                guard let error = error as? ConfigError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.file, "lights.toml")
                XCTAssertEqual(error.line, 3, "\(error)")
                XCTAssertEqual(error.key, key, "\(error)")
                if message.hasPrefix("\"") {
                    XCTAssertEqual(error.message, message, line)
                } else {
                    XCTAssertTrue(error.message.contains(message), "\(line): \(error)")
                }
            }
        }
    }
}
