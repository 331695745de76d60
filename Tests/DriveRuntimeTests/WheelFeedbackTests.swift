import DriveConfig
import DriveCore
import DriveInput
import DriveRuntime
import XCTest

/// A racing wheel's centring follows the engine (the feedback planner's `centring`), and the wheel's config
/// gives its axes the shapes a G29 needs.
final class WheelFeedbackTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)

    private func state(engine: Bool, speed: Int = 0) -> DriveState {
        var state = DriveState()
        state.engineOn = engine
        state.speed = speed
        return state
    }

    func testTheCentringIsOnWhileTheEngineIsOnAndOffWhenItGoesOff() {
        var planner = FeedbackPlanner(maxSpeed: 240, sessionLimit: .seconds(180))
        XCTAssertFalse(planner.centring, "engine off at the start: the wheel is free")
        _ = planner.handle(.state(state(engine: true)), at: t0)
        XCTAssertTrue(planner.centring, "engine on: centring")
        _ = planner.handle(.state(state(engine: true, speed: 120)), at: t0.advanced(by: .seconds(1)))
        _ = planner.handle(.link(up: false), at: t0.advanced(by: .seconds(2)))
        XCTAssertTrue(planner.centring, "a dropped link leaves the engine on: still centring")
        _ = planner.handle(.state(state(engine: false)), at: t0.advanced(by: .seconds(3)))
        XCTAssertFalse(planner.centring, "engine off: released")
        _ = planner.handle(.state(state(engine: true)), at: t0.advanced(by: .seconds(4)))
        XCTAssertTrue(planner.centring, "on again")
        // The kiosk turn's end turns the engine off: so does the centring.
        _ = planner.tick(at: t0.advanced(by: .seconds(174)))
        _ = planner.handle(.state(state(engine: false)), at: t0.advanced(by: .seconds(184)))
        XCTAssertFalse(planner.centring)
    }

    func testTheShippedWheelConfigShapesTheG29sAxes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/wheel.toml")
        let config = try CarbridgeConfig.load(text: String(contentsOf: url, encoding: .utf8), file: "wheel.toml", resolver: EventCodeNames())
        XCTAssertEqual(config.gamepadAxisShapes, [0: .wheel, 2: .pedal, 5: .pedal], "ABS_X, ABS_Z gas, ABS_RZ brake")
        let settings = config.mapperSettings
        XCTAssertNil(settings.stick)
        XCTAssertEqual(settings.wheel?.axisCode, 0)
        XCTAssertEqual(settings.wheel?.lockDegrees, 900)
        XCTAssertEqual(settings.wheel?.rangeDegrees, 90)
        XCTAssertEqual(settings.throttle?.axisCode, 2)
        XCTAssertEqual(settings.throttle?.brakeAxisCode, 5)
        XCTAssertEqual(config.feedback.centring, 0.5)
        let t300 = try CarbridgeConfig.load(
            text: "[steering]\nsource = \"wheel\"\n[throttle]\naxis = \"ABS_Y\"\nbrake_axis = \"ABS_Z\"\n", file: "t.toml", resolver: EventCodeNames())
        XCTAssertEqual(t300.gamepadAxisShapes, [0: .wheel, 1: .oneSided, 2: .oneSided], "a pedal on ABS_Y is one-sided too")
        // Any other config keeps the kernel's shapes.
        XCTAssertEqual(try CarbridgeConfig.load(text: "[throttle]\naxis = \"ABS_RZ\"\n", file: "pad.toml", resolver: EventCodeNames()).gamepadAxisShapes, [:])
    }

    func testAG29sAxesNormaliseAsTheMappingNeedsThem() {
        // A G29 (hid-lg4ff): ABS_X 0…65535 for 900°, pedals 0…255 and 255 released (flat 15 where hid-input
        // sets one for a joystick's 8-bit axes).
        let wheel = AbsInfo(minimum: 0, maximum: 65535, flat: 4095)
        XCTAssertEqual(wheel.normalise(32768, shape: .wheel), 0, accuracy: 1e-4, "the flat is not applied to a wheel")
        XCTAssertEqual(wheel.normalise(32768 + 3641, shape: .wheel), 50.0 / 450, accuracy: 1e-3, "50° of wheel")
        XCTAssertEqual(wheel.normalise(0, shape: .wheel), -1)
        XCTAssertEqual(wheel.normalise(65535, shape: .wheel), 1)
        let pedal = AbsInfo(minimum: 0, maximum: 255, flat: 15)
        XCTAssertEqual(pedal.normalise(255, shape: .pedal), 0, "released")
        XCTAssertEqual(pedal.normalise(245, shape: .pedal), 0, "within the flat of released")
        XCTAssertEqual(pedal.normalise(0, shape: .pedal), 1, "floored")
        XCTAssertEqual(pedal.normalise(135, shape: .pedal), 105.0 / 240, accuracy: 1e-9, "120 from released, less the flat, of 240")
    }

    func testKnownWheelsAreGamepadsWithoutUdevsJoystickTag() {
        XCTAssertEqual(DeviceClassifier.classifyInput(properties: [:], vendor: 0x046D, product: 0xC24F), .gamepad, "G29")
        XCTAssertEqual(DeviceClassifier.classifyInput(properties: [:], vendor: 0x044F, product: 0xB677), .gamepad, "T150")
        XCTAssertEqual(DeviceClassifier.classifyInput(properties: [:], vendor: 0x046D, product: 0xC52B), .other, "a receiver")
        XCTAssertEqual(RacingWheels.model(vendor: 0x046D, product: 0xC262)?.name, "Logitech G920 (active mode)")
    }
}
