import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

final class ControlMapperTests: XCTestCase {
    private func buttonMap() throws -> ButtonMap {
        try ButtonMap.parse(
            bindings: [
                ("BTN_START", "engine", nil), ("BTN_TR", "speed_up", nil), ("BTN_SOUTH", "gear", nil),
                ("BTN_WEST", "deadman", nil), ("ABS_HAT0X-", "f1", nil), ("ABS_HAT0X+", "f2", nil),
            ],
            longPress: [("BTN_SOUTH", "calibrate", nil)],
            resolver: FakeResolver())
    }

    private func axis(_ code: UInt16, _ value: Double) -> AxisValue { AxisValue(code: code, value: value, raw: 0) }

    func testStickSteersOnlyOnMeaningfulChanges() throws {
        var mapper = ControlMapper(settings: .init(stick: .init(mode: .x, deadzone: 0), buttons: try buttonMap()))
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(0), axes: [axis(Codes.absX, 0.5)]), role: .gamepad),
                       [.control(.steer(45))])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(1), axes: [axis(Codes.absX, 0.504)]), role: .gamepad), [],
                       "0.36° is below the 0.5° resolution")
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(2), axes: [axis(Codes.absX, 0.51)]), role: .gamepad),
                       [.control(.steer(0.51 * 90))])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(3), axes: [axis(Codes.absY, 0.3)]), role: .gamepad), [],
                       "y does not matter in x mode")
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(4), axes: [axis(Codes.absX, 1)]), role: .gamepad),
                       [.control(.steer(90))])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(5), axes: [axis(Codes.absX, 0.999)]), role: .gamepad), [])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(6), axes: [axis(Codes.absX, 1)]), role: .gamepad),
                       [], "back at 90 but nothing was emitted in between")
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(7), axes: [axis(Codes.absX, 0.004)]), role: .gamepad),
                       [.control(.steer(0.004 * 90))])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(8), axes: [axis(Codes.absX, 0)]), role: .gamepad),
                       [.control(.steer(0))], "centre is always sent")
    }

    func testPolarStickUsesBothAxesFromSeparateFrames() throws {
        var mapper = ControlMapper(settings: .init(stick: .init(mode: .polar, deadzone: 0.2), buttons: try buttonMap()))
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(0), axes: [axis(Codes.absY, -1)]), role: .gamepad),
                       [.control(.steer(0))])
        let events = mapper.handle(InputFrame(time: ms(1), axes: [axis(Codes.absX, 1)]), role: .gamepad)
        guard case .control(.steer(let theta))? = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(theta, 45, accuracy: 1e-9)
    }

    func testStickOnOtherRolesIsIgnored() throws {
        var mapper = ControlMapper(settings: .init(buttons: try buttonMap()))
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(0), axes: [axis(Codes.absX, 1)]), role: .keyboard), [])
    }

    func testButtonsAndHats() throws {
        var mapper = ControlMapper(settings: .init(buttons: try buttonMap()))
        let press = InputFrame(time: ms(0), keys: [KeyChange(code: Codes.btnStart, pressed: true), KeyChange(code: Codes.btnTR, pressed: true)])
        XCTAssertEqual(controls(mapper.handle(press, role: .gamepad)), [.engine, .speedUp])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(10), axes: [axis(Codes.hat0X, -1)]), role: .gamepad)), [.function(1)])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(20), axes: [axis(Codes.hat0X, -0.6)]), role: .gamepad)), [],
                       "still held")
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(30), axes: [axis(Codes.hat0X, 1)]), role: .gamepad)), [.function(2)],
                       "flip: − released, + pressed")
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(40), axes: [axis(Codes.hat0X, 0.4)]), role: .gamepad)), [])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(50), axes: [axis(Codes.hat0X, 0.5)]), role: .gamepad)), [.function(2)],
                       "0.5 is pressed again")
    }

    func testDeadmanThroughTheMapperAndDeviceLoss() throws {
        var mapper = ControlMapper(settings: .init(buttons: try buttonMap()))
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(0), keys: [KeyChange(code: Codes.btnWest, pressed: true)]), role: .gamepad)),
                       [.deadman(held: true)])
        XCTAssertEqual(controls(mapper.deviceLost(role: .gamepad)), [.deadman(held: false)])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(10), keys: [KeyChange(code: Codes.btnWest, pressed: false)]), role: .gamepad)),
                       [], "the release after the loss is not sent twice")
    }

    func testLongPressThroughTheMapperWithInjectedClock() throws {
        var mapper = ControlMapper(settings: .init(buttons: try buttonMap(), gestures: .init(longPressDuration: .milliseconds(800))))
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(100), keys: [KeyChange(code: Codes.btnSouth, pressed: true)]), role: .gamepad), [])
        XCTAssertEqual(mapper.nextDeadline, ms(900))
        XCTAssertEqual(mapper.tick(at: ms(899)), [])
        XCTAssertEqual(mapper.tick(at: ms(900)), [.calibrate])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(950), keys: [KeyChange(code: Codes.btnSouth, pressed: false)]), role: .gamepad), [])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(1_000), keys: [KeyChange(code: Codes.btnSouth, pressed: true)]), role: .gamepad), [])
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(1_200), keys: [KeyChange(code: Codes.btnSouth, pressed: false)]), role: .gamepad),
                       [.control(.gear)])
    }

    func testThrottleEmitsOnlyChangedSpeeds() throws {
        var mapper = ControlMapper(settings: .init(throttle: .init(axisCode: Codes.absRZ, deadzone: 0, maxSpeed: 100), buttons: try buttonMap()))
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(0), axes: [axis(Codes.absRZ, 0.25)]), role: .gamepad)), [.setSpeed(60)])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(1), axes: [axis(Codes.absRZ, 0.26)]), role: .gamepad)), [])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(2), axes: [axis(Codes.absRZ, 1)]), role: .gamepad)), [.setSpeed(100)])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(3), axes: [axis(Codes.absRZ, 0.9)]), role: .gamepad)), [])
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(4), axes: [axis(Codes.absRZ, 0)]), role: .gamepad)), [.setSpeed(0)])
    }

    func testTiltSteeringAndCalibration() throws {
        var mapper = ControlMapper(settings: .init(stick: nil, tilt: .init(), buttons: try buttonMap()))
        let rest = gravity(rolledDegrees: 10)
        let first = mapper.handle(InputFrame(time: ms(0), acceleration: rest), role: .accelerometer)
        guard case .control(.steer(let theta))? = first.first else { return XCTFail("\(first)") }
        XCTAssertEqual(theta, 10, accuracy: 1e-9)
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(10), acceleration: gravity(rolledDegrees: 10.3)), role: .accelerometer), [],
                       "0.3° of noise is not sent")
        // Long-press calibrate on the gamepad: the tilt's current pose becomes straight ahead.
        _ = mapper.handle(InputFrame(time: ms(20), keys: [KeyChange(code: Codes.btnSouth, pressed: true)]), role: .gamepad)
        XCTAssertEqual(mapper.tick(at: ms(620)), [.calibrate, .control(.steer(0))])
        assertClose(mapper.tiltNeutralDegrees, 10.3, accuracy: 1e-9)
        let after = mapper.handle(InputFrame(time: ms(700), acceleration: gravity(rolledDegrees: 40.3)), role: .accelerometer)
        guard case .control(.steer(let turned))? = after.first else { return XCTFail("\(after)") }
        XCTAssertEqual(turned, 30, accuracy: 1e-9)
    }

    func testCalibrateWithoutTiltStillReportsIt() throws {
        let map = try ButtonMap.parse(bindings: [("BTN_MODE", "calibrate", nil)], resolver: FakeResolver())
        var mapper = ControlMapper(settings: .init(buttons: map))
        XCTAssertEqual(mapper.handle(InputFrame(time: ms(0), keys: [KeyChange(code: 316, pressed: true)]), role: .gamepad), [.calibrate])
        XCTAssertNil(mapper.tiltNeutralDegrees)
    }

    func testRepeatThroughTheMapper() throws {
        var mapper = ControlMapper(settings: .init(
            buttons: try buttonMap(),
            gestures: .init(repeatEnabled: true, repeatDelay: .milliseconds(300), repeatInterval: .milliseconds(50))))
        XCTAssertEqual(controls(mapper.handle(InputFrame(time: ms(0), keys: [KeyChange(code: Codes.btnTR, pressed: true)]), role: .keyboard)),
                       [.speedUp])
        var count = 0
        while let deadline = mapper.nextDeadline, deadline <= ms(500) {
            count += controls(mapper.tick(at: deadline)).count
        }
        XCTAssertEqual(count, 5)  // 300, 350, 400, 450, 500
    }
}
