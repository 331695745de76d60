import DriveCore
import DriveInput
import DriveMapping
import DriveRuntime
import XCTest

final class MonitorFormatterTests: XCTestCase {
    func testDescribesKeysAxesAndAcceleration() {
        let formatter = MonitorFormatter(hysteresisDegrees: 2)
        let frame = InputFrame(
            time: .zero, axes: [AxisValue(code: 0, value: -0.5, raw: -16384)],
            keys: [KeyChange(code: 304, pressed: true), KeyChange(code: 315, pressed: false)],
            acceleration: Vector3(x: 0.123, y: -9.806, z: 0))
        XCTAssertEqual(
            formatter.describe(frame),
            "BTN_SOUTH down, BTN_START up, ABS_X -16384 (-0.50), accel x 0.12 y -9.81 z 0.00 m/s²")
        XCTAssertEqual(formatter.describe(InputFrame(time: .zero)), "(no change)")
    }

    func testRangeFollowsTheTableThenHysteresis() {
        var formatter = MonitorFormatter(hysteresisDegrees: 2)
        XCTAssertEqual(formatter.stateText, "θ 0.0° / range 0")
        XCTAssertEqual(formatter.apply(.steer(16)), "steer +16.0°")
        XCTAssertEqual(formatter.range, 1, "the first steer uses the bare table")
        _ = formatter.apply(.steer(14))
        XCTAssertEqual(formatter.range, 1, "inside the hysteresis band the range stays")
        _ = formatter.apply(.steer(12.9))
        XCTAssertEqual(formatter.range, 0)
        _ = formatter.apply(.steer(-120))
        XCTAssertEqual(formatter.stateText, "θ -90.0° / range -2")
        _ = formatter.apply(.steer(.nan))
        XCTAssertEqual(formatter.stateText, "θ -90.0° / range -2", "a non-finite θ changes nothing")
    }

    func testLineAndControlNames() {
        var formatter = MonitorFormatter(hysteresisDegrees: 0)
        let names = [Control.engine, .speedUp, .function(3), .setSpeed(40), .deadman(held: true), .inputLost]
            .map { formatter.apply($0) }
        XCTAssertEqual(names, ["engine", "speed_up", "f3", "speed = 40", "deadman held", "INPUT LOST"])
        XCTAssertEqual(
            formatter.line(source: "pad", raw: "BTN_START down", controls: ["engine"]),
            "pad  BTN_START down → engine / θ 0.0° / range 0")
        XCTAssertEqual(formatter.line(source: "pad", raw: "ABS_Y 3 (0.00)", controls: []),
                       "pad  ABS_Y 3 (0.00) → — / θ 0.0° / range 0")
    }
}
