import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveTerminal
import XCTest

final class MonitorFormatterTests: XCTestCase {
    func testDescribesKeysAxesAndAcceleration() {
        let formatter = MonitorFormatter(hysteresisDegrees: 2, resolver: EventCodeNames())
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
        var formatter = MonitorFormatter(hysteresisDegrees: 2, resolver: EventCodeNames())
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
        var formatter = MonitorFormatter(hysteresisDegrees: 0, resolver: EventCodeNames())
        let names = [Control.engine, .speedUp, .function(3), .setSpeed(40), .deadman(held: true), .inputLost]
            .map { formatter.apply($0) }
        XCTAssertEqual(names, ["engine", "speed_up", "f3", "speed = 40", "deadman held", "INPUT LOST"])
        XCTAssertEqual(
            formatter.line(source: "pad", raw: "BTN_START down", controls: ["engine"]),
            "pad  BTN_START down → engine / θ 0.0° / range 0")
        XCTAssertEqual(formatter.line(source: "pad", raw: "ABS_Y 3 (0.00)", controls: []),
                       "pad  ABS_Y 3 (0.00) → — / θ 0.0° / range 0")
    }

    /// Regression: `Int64(x)` trapped for |x| × 100 beyond Int64 (IIO `(raw + offset) × scale` can be anything).
    func testFormattingIsTotalForHugeAndNonFiniteValues() {
        var formatter = MonitorFormatter(hysteresisDegrees: 2, resolver: EventCodeNames())
        let frame = InputFrame(
            time: .zero, axes: [AxisValue(code: 0, value: 1e300, raw: 7)],
            acceleration: Vector3(x: 1e17, y: -.infinity, z: .nan))
        XCTAssertEqual(formatter.describe(frame), "ABS_X 7 (1e+300), accel x 1e+17 y -inf z nan m/s²")
        XCTAssertEqual(MonitorFormatter.name(of: .steer(-9.3e16)), "steer -93000000000000000.0°")
        XCTAssertEqual(MonitorFormatter.name(of: .steer(-9.3e17)), "steer -9.3e+17°")
        XCTAssertEqual(MonitorFormatter.name(of: .steer(.greatestFiniteMagnitude)), "steer +1.7976931348623157e+308°")
        XCTAssertEqual(MonitorFormatter.name(of: .steer(.infinity)), "steer +inf°")
        XCTAssertEqual(MonitorFormatter.name(of: .steer(-0.04)), "steer 0.0°")
        XCTAssertEqual(MonitorFormatter.name(of: .steer(9.999e15)), "steer +9999000000000000.0°")
        XCTAssertEqual(formatter.apply(.steer(.nan)), "steer nan°")
        XCTAssertEqual(formatter.stateText, "θ 0.0° / range 0", "a non-finite steer does not move θ")
        for value in [Double.leastNonzeroMagnitude, 0.005, 0.995, 1e15, 9.2e16, 9.3e16, 1e18, -1e19, .ulpOfOne] {
            _ = formatter.describe(InputFrame(time: .zero, acceleration: Vector3(x: value, y: -value, z: value)))
        }
    }
}
