import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveConfig
import XCTest

final class MappingConfigurationTests: XCTestCase {
    private let names = EventCodeNames()

    private func settings(_ text: String) throws -> ControlMapper.Settings {
        try CarbridgeConfig.parse(text: text, file: "map.toml", resolver: names).mapperSettings
    }

    private func configError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigError? {
        do {
            _ = try settings(text)
            XCTFail("no error", file: file, line: line)
            return nil
        } catch let error as ConfigError {
            return error
        } catch {
            XCTFail("not a ConfigError: \(error)", file: file, line: line)
            return nil
        }
    }

    func testDefaultsResolve() throws {
        let settings = try settings("")
        XCTAssertEqual(settings.stick?.xAxisCode, 0)
        XCTAssertEqual(settings.stick?.yAxisCode, 1)
        XCTAssertNil(settings.tilt)
        XCTAssertNil(settings.throttle)
    }

    func testUnknownButtonNameHasFileLineKeyAndSuggestion() {
        let error = configError("""
            [drive]
            max_speed = 120

            [buttons]
            BTN_START = "engine"
            BTN_SOTH = "f1"
            """)
        XCTAssertEqual(error?.file, "map.toml")
        XCTAssertEqual(error?.line, 6)
        XCTAssertEqual(error?.key, "buttons.BTN_SOTH")
        XCTAssertTrue(error?.message.contains("did you mean \"BTN_SOUTH\"") ?? false, "\(String(describing: error))")
        XCTAssertTrue(error?.description.hasPrefix("map.toml:6: buttons.BTN_SOTH: ") ?? false, "\(String(describing: error))")
    }

    func testLongPressBindingErrorNamesLongPressKey() {
        let error = configError("""
            [buttons]
            BTN_START = "f1"
            [buttons.long_press]
            BTN_SELEKT = "engine"
            """)
        XCTAssertEqual(error?.line, 4)
        XCTAssertEqual(error?.key, "buttons.long_press.BTN_SELEKT")
        XCTAssertTrue(error?.message.contains("BTN_SELECT") ?? false, "\(String(describing: error))")
    }

    func testAxisBoundWithoutDirectionIsAnError() {
        let error = configError("[buttons]\nABS_HAT0X = \"gear\"\n")
        XCTAssertEqual(error?.key, "buttons.ABS_HAT0X")
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.message.contains("ABS_HAT0X-") ?? false, "\(String(describing: error))")
    }

    func testDpadDirectionsResolve() throws {
        let settings = try settings("[buttons]\n\"ABS_HAT0X-\" = \"speed_down\"\n\"ABS_HAT0X+\" = \"speed_up\"\n")
        XCTAssertTrue(settings.buttons.boundAxisCodes.contains(16), "ABS_HAT0X is code 16")
    }

    func testBadAxisNameHasKeyLineAndSuggestion() {
        let error = configError("[steering]\nmode = \"polar\"\naxis_x = \"ABS_RX\"\naxis_y = \"ABS_YY\"\n")
        XCTAssertEqual(error?.key, "steering.axis_y")
        XCTAssertEqual(error?.line, 4)
        XCTAssertTrue(error?.message.contains("did you mean \"ABS_Y\"") ?? false, "\(String(describing: error))")
    }

    func testButtonNameAsAxisIsRejected() {
        let error = configError("[throttle]\naxis = \"BTN_TR2\"\n")
        XCTAssertEqual(error?.key, "throttle.axis")
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.message.contains("not an absolute axis") ?? false, "\(String(describing: error))")
    }

    func testTiltAxesWithMinusFlipThroughTheMountMatrix() throws {
        let settings = try settings("""
            [steering]
            source = "tilt"
            tilt_axes = "-y,z"
            neutral_deg = 5
            sensitivity = 2
            smoothing_ms = 40
            """)
        let tilt = try XCTUnwrap(settings.tilt)
        XCTAssertNil(settings.stick)
        XCTAssertEqual(tilt.lateralAxis, .y)
        XCTAssertEqual(tilt.verticalAxis, .z)
        XCTAssertEqual(tilt.mountMatrix.apply(Vector3(x: 1, y: 2, z: 3)), Vector3(x: 1, y: -2, z: 3))
        XCTAssertEqual(tilt.neutralDegrees, 5)
        XCTAssertEqual(tilt.sensitivity, 2)
        XCTAssertEqual(tilt.filterTimeConstant, .milliseconds(40))
        // Gravity along +y (device rolled left) reads as a negative roll once y is flipped.
        let mapper = TiltMapper(settings: tilt)
        XCTAssertEqual(try XCTUnwrap(mapper.rawRollDegrees(Vector3(x: 0, y: 9.81, z: 9.81))), -45, accuracy: 1e-9)
    }

    func testTiltAxesWithoutMinusKeepIdentity() throws {
        let tilt = try XCTUnwrap(try settings("[steering]\nsource = \"tilt\"\ntilt_axes = \"x,-z\"\n").tilt)
        XCTAssertEqual(tilt.mountMatrix.apply(Vector3(x: 1, y: 2, z: 3)), Vector3(x: 1, y: 2, z: -3))
        XCTAssertEqual(tilt.lateralAxis, .x)
        XCTAssertEqual(tilt.verticalAxis, .z)
    }

    func testThrottleAxisResolvedAndCappedByMaxSpeed() throws {
        let settings = try settings("[drive]\nmax_speed = 150\n[throttle]\naxis = \"ABS_RZ\"\n")
        let throttle = try XCTUnwrap(settings.throttle)
        XCTAssertEqual(throttle.axisCode, 5)
        XCTAssertEqual(throttle.maxSpeed, 150)
    }

    func testThrottleHysteresisReachesEveryAnalogThrottle() throws {
        XCTAssertEqual(try settings("[throttle]\naxis = \"ABS_RZ\"\n").throttle?.hysteresis, 0.25, "a quarter of a step by default")
        let trigger = try settings("[throttle]\naxis = \"ABS_GAS\"\nhysteresis = 0.4\n")
        XCTAssertEqual(trigger.throttle?.hysteresis, 0.4)
        let board = try settings("[steering]\nsource = \"board\"\n[throttle]\nsource = \"board\"\nhysteresis = 0\n")
        XCTAssertEqual(board.handsFree?.boardLean.hysteresis, 0)
        let tilt = try settings("[throttle]\nsource = \"tilt\"\nhysteresis = 0.5\n")
        guard case .tilt(_, let lean)? = tilt.handsFree?.throttle else { return XCTFail("no tilt throttle") }
        XCTAssertEqual(lean.hysteresis, 0.5)
    }

    func testABadThrottleHysteresisIsAClearError() {
        for value in ["1.5", "-0.1", "\"much\""] {
            let error = configError("[throttle]\nhysteresis = \(value)\n")
            XCTAssertEqual(error?.line, 2, value)
            XCTAssertTrue(error?.description.contains("throttle.hysteresis") ?? false, "\(String(describing: error))")
        }
    }

    func testGestureTimingCarriedOver() throws {
        let settings = try settings("[gestures]\nlong_press_ms = 900\nrepeat_delay_ms = 400\nrepeat_interval_ms = 100\n")
        XCTAssertEqual(settings.gestures.longPressDuration, .milliseconds(900))
        XCTAssertTrue(settings.gestures.repeatEnabled)
        XCTAssertEqual(settings.gestures.repeatDelay, .milliseconds(400))
        XCTAssertEqual(settings.gestures.repeatInterval, .milliseconds(100))
        XCTAssertFalse(try self.settings("").gestures.repeatEnabled)
    }
}
