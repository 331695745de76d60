import DriveMapping
import XCTest

final class AxisMapperTests: XCTestCase {
    func testXModeFullDeflectionIsExactlyNinety() {
        let mapper = AxisMapper(settings: .init(mode: .x, deadzone: 0.1))
        XCTAssertEqual(mapper.angleDegrees(x: 1, y: 0), 90)
        XCTAssertEqual(mapper.angleDegrees(x: -1, y: 0), -90)
        XCTAssertEqual(mapper.angleDegrees(x: 1.3, y: 0), 90, "beyond full deflection clamps")
    }

    func testXModeDeadzoneEdgesAndRescaling() {
        let mapper = AxisMapper(settings: .init(mode: .x, deadzone: 0.2))
        XCTAssertEqual(mapper.angleDegrees(x: 0, y: 0), 0)
        XCTAssertEqual(mapper.angleDegrees(x: 0.2, y: 0), 0, "the edge itself is still inside")
        XCTAssertEqual(mapper.angleDegrees(x: -0.2, y: 0), 0)
        XCTAssertEqual(mapper.angleDegrees(x: 0.6, y: 0), 45, accuracy: 1e-9)  // (0.6−0.2)/0.8 = 0.5
        XCTAssertEqual(mapper.angleDegrees(x: -0.6, y: 0), -45, accuracy: 1e-9)
        XCTAssertEqual(mapper.angleDegrees(x: 0.2001, y: 0), 90 * 0.0001 / 0.8, accuracy: 1e-9, "continuous at the edge")
        XCTAssertEqual(mapper.angleDegrees(x: 0, y: -1), 0, "x mode ignores y")
    }

    func testXModeWithoutDeadzoneIsLinear() {
        let mapper = AxisMapper(settings: .init(mode: .x, deadzone: 0))
        XCTAssertEqual(mapper.angleDegrees(x: 0.5, y: 0), 45)
        XCTAssertEqual(mapper.angleDegrees(x: -0.25, y: 0), -22.5)
    }

    func testPolarCompassPoints() {
        let mapper = AxisMapper(settings: .init(mode: .polar, deadzone: 0.1))
        XCTAssertEqual(mapper.angleDegrees(x: 0, y: -1), 0, accuracy: 1e-9)  // north (stick up)
        XCTAssertEqual(mapper.angleDegrees(x: 1, y: 0), 90, accuracy: 1e-9)  // east
        XCTAssertEqual(mapper.angleDegrees(x: -1, y: 0), -90, accuracy: 1e-9)  // west
        XCTAssertEqual(mapper.angleDegrees(x: 0.7, y: -0.7), 45, accuracy: 1e-9)  // north-east
        XCTAssertEqual(mapper.angleDegrees(x: -0.5, y: -0.5), -45, accuracy: 1e-9)  // north-west
        XCTAssertEqual(abs(mapper.angleDegrees(x: 0, y: 1)), 90, "south clamps to full lock")
        XCTAssertEqual(mapper.angleDegrees(x: 0.01, y: 1), 90, accuracy: 1e-9, "south-by-east → +90")
        XCTAssertEqual(mapper.angleDegrees(x: -0.01, y: 1), -90, accuracy: 1e-9, "south-by-west → −90")
        XCTAssertEqual(mapper.angleDegrees(x: 0.5, y: 0.5), 90, accuracy: 1e-9, "south-east → +90")
    }

    func testPolarRadialDeadzone() {
        let mapper = AxisMapper(settings: .init(mode: .polar, deadzone: 0.25))
        XCTAssertEqual(mapper.angleDegrees(x: 0.2, y: 0), 0, "inside the deadzone: straight")
        XCTAssertEqual(mapper.angleDegrees(x: 0.15, y: -0.15), 0, "magnitude 0.21 < 0.25")
        XCTAssertEqual(mapper.angleDegrees(x: 0.25, y: 0), 0, "on the edge: still inside")
        XCTAssertEqual(mapper.angleDegrees(x: 0.26, y: 0), 90, accuracy: 1e-9, "just past: the direction counts")
        XCTAssertEqual(mapper.angleDegrees(x: 0.2, y: -0.2), 45, accuracy: 1e-9, "magnitude 0.28 > 0.25")
    }

    func testInvert() {
        let x = AxisMapper(settings: .init(mode: .x, deadzone: 0, invert: true))
        XCTAssertEqual(x.angleDegrees(x: 0.5, y: 0), -45)
        XCTAssertEqual(x.angleDegrees(x: -1, y: 0), 90)
        let polar = AxisMapper(settings: .init(mode: .polar, deadzone: 0.1, invert: true))
        XCTAssertEqual(polar.angleDegrees(x: 1, y: 0), -90, accuracy: 1e-9)
        XCTAssertEqual(polar.angleDegrees(x: 0, y: 0), 0)
    }

    func testExpo() {
        let full = AxisMapper(settings: .init(mode: .x, deadzone: 0, expo: 1))
        XCTAssertEqual(full.angleDegrees(x: 0.5, y: 0), 90 * 0.125, accuracy: 1e-9)  // cubic
        XCTAssertEqual(full.angleDegrees(x: 1, y: 0), 90, "expo keeps full deflection at 90")
        XCTAssertEqual(full.angleDegrees(x: -1, y: 0), -90)
        let half = AxisMapper(settings: .init(mode: .x, deadzone: 0, expo: 0.5))
        XCTAssertEqual(half.angleDegrees(x: 0.5, y: 0), 90 * (0.5 * 0.5 + 0.5 * 0.125), accuracy: 1e-9)
        XCTAssertEqual(half.angleDegrees(x: -0.5, y: 0), -90 * (0.5 * 0.5 + 0.5 * 0.125), accuracy: 1e-9)
        let polar = AxisMapper(settings: .init(mode: .polar, deadzone: 0.1, expo: 1))
        XCTAssertEqual(polar.angleDegrees(x: 1, y: -1), 90 * 0.125, accuracy: 1e-9, "45° = half lock → cubed")
    }

    func testDeadzoneAndExpoTogether() {
        let mapper = AxisMapper(settings: .init(mode: .x, deadzone: 0.2, expo: 1))
        XCTAssertEqual(mapper.angleDegrees(x: 0.6, y: 0), 90 * 0.125, accuracy: 1e-9)
        XCTAssertEqual(mapper.angleDegrees(x: 1, y: 0), 90)
    }

    func testBadInputsNeverCrash() {
        let mapper = AxisMapper(settings: .init(mode: .x, deadzone: 1.5, expo: -3))
        XCTAssertEqual(mapper.angleDegrees(x: 1, y: 0), 90, "deadzone clamped below 1: full deflection still 90")
        XCTAssertEqual(mapper.angleDegrees(x: .nan, y: 0), 0)
        XCTAssertEqual(AxisMapper(settings: .init(mode: .polar)).angleDegrees(x: .infinity, y: 0), 0)
    }
}
