import DriveConfig
import XCTest

/// The racing wheel's keys: what they become, and a clear error at its line for each mistake.
final class WheelConfigTests: XCTestCase {
    private func errors(_ text: String) -> [ConfigError] {
        do {
            _ = try CarbridgeConfig.load(text: text, file: "wheel.toml")
            XCTFail("no error")
            return []
        } catch {
            return error.errors
        }
    }

    func testTheWheelsKeysAreRead() throws {
        let config = try CarbridgeConfig.load(
            text: "[steering]\nsource = \"wheel\"\nwheel_lock_deg = 1080\nwheel_range_deg = 135\n"
                + "[throttle]\naxis = \"ABS_Y\"\nbrake_axis = \"ABS_Z\"\ninvert = true\n",
            file: "t300.toml")
        let settings = config.mapperSettings
        XCTAssertEqual(settings.wheel?.lockDegrees, 1080)
        XCTAssertEqual(settings.wheel?.rangeDegrees, 135)
        XCTAssertEqual(settings.throttle?.axisCode, 1)
        XCTAssertEqual(settings.throttle?.brakeAxisCode, 2)
        let defaults = try CarbridgeConfig.load(text: "", file: "none.toml")
        XCTAssertEqual(defaults.steering.wheelLockDegrees, 900)
        XCTAssertEqual(defaults.steering.wheelRangeDegrees, 90)
        XCTAssertEqual(defaults.throttle.brakeAxis, "")
        XCTAssertFalse(defaults.throttle.invert)
    }

    func testARangeBeyondHalfTheLockIsAnErrorAtItsLine() {
        let found = errors("[steering]\nsource = \"wheel\"\nwheel_lock_deg = 900\nwheel_range_deg = 500\n")
        XCTAssertEqual(found.map(\.key), ["steering.wheel_range_deg"])
        XCTAssertEqual(found.first?.line, 4)
        XCTAssertTrue(found.first?.message.contains("more than half of wheel_lock_deg") ?? false, "\(found)")
    }

    func testABrakeWithoutGasAndAMisspeltBrakeAreErrors() {
        let alone = errors("[throttle]\nbrake_axis = \"ABS_RZ\"\n")
        XCTAssertEqual(alone.map(\.key), ["throttle.brake_axis"])
        XCTAssertEqual(alone.first?.line, 2)
        XCTAssertTrue(alone.first?.message.contains("a brake needs a gas pedal") ?? false, "\(alone)")
        let misspelt = errors("[throttle]\naxis = \"ABS_Z\"\nbrake_axis = \"ABS_RZZ\"\n")
        XCTAssertEqual(misspelt.map(\.key), ["throttle.brake_axis"])
        XCTAssertTrue(misspelt.first?.message.contains("did you mean \"ABS_RZ\"") ?? false, "\(misspelt)")
        let wheelAxis = errors("[steering]\nsource = \"wheel\"\naxis_x = \"ABS_WHEELX\"\n")
        XCTAssertEqual(wheelAxis.map(\.key), ["steering.axis_x"], "the wheel's axis is checked like a stick's")
        XCTAssertEqual(errors("[steering]\nwheel_lock_deg = 10\n").map(\.key), ["steering.wheel_lock_deg"])
    }
}
