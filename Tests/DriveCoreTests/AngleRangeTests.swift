import DriveCore
import XCTest

final class AngleRangeTests: XCTestCase {
    func testBareTableAtEveryBoundary() {
        let expected: [(Double, Int)] = [
            (0, 0), (10, 0), (15, 0), (15.0001, 1), (60, 1), (60.0001, 2), (90, 2), (90.5, 2), (1000, 2),
            (-10, 0), (-15, 0), (-15.0001, -1), (-60, -1), (-60.0001, -2), (-90, -2), (-90.5, -2), (-1000, -2),
            (.infinity, 2), (-.infinity, -2), (.nan, 0),
        ]
        for (theta, range) in expected {
            XCTAssertEqual(AngleRange.table(theta), range, "θ=\(theta)")
        }
    }

    func testClampToNinety() {
        XCTAssertEqual(AngleRange.clamp(120), 90)
        XCTAssertEqual(AngleRange.clamp(-120), -90)
        XCTAssertEqual(AngleRange.clamp(33.5), 33.5)
    }

    func testZeroHysteresisIsExactlyTheTableFromEveryRange() {
        var theta = -100.0
        while theta <= 100 {
            for current in -2...2 {
                XCTAssertEqual(
                    AngleRange.next(current: current, angleDegrees: theta, hysteresisDegrees: 0),
                    AngleRange.table(theta), "θ=\(theta) from A=\(current)")
            }
            theta += 0.25
        }
        for theta in [15.0, 60, -15, -60, 15.0001, -15.0001, 60.0001, -60.0001] {
            for current in -2...2 {
                XCTAssertEqual(
                    AngleRange.next(current: current, angleDegrees: theta, hysteresisDegrees: 0),
                    AngleRange.table(theta), "θ=\(theta) from A=\(current)")
            }
        }
    }

    func testFirstRangeComesFromTheTable() {
        XCTAssertEqual(AngleRange.next(current: nil, angleDegrees: 16, hysteresisDegrees: 2), 1)
        XCTAssertEqual(AngleRange.next(current: nil, angleDegrees: -61, hysteresisDegrees: 2), -2)
        XCTAssertEqual(AngleRange.next(current: nil, angleDegrees: 15, hysteresisDegrees: 2), 0)
    }

    func testHysteresisTwoApproachingFifteenFromBothSides() {
        func next(_ current: Int, _ theta: Double) -> Int {
            AngleRange.next(current: current, angleDegrees: theta, hysteresisDegrees: 2)
        }
        // Rising from 0: must pass 15 + 2 strictly.
        XCTAssertEqual(next(0, 15.0001), 0)
        XCTAssertEqual(next(0, 16.9), 0)
        XCTAssertEqual(next(0, 17), 0)
        XCTAssertEqual(next(0, 17.0001), 1)
        // Falling from 1: must pass 15 − 2 strictly.
        XCTAssertEqual(next(1, 15), 1)
        XCTAssertEqual(next(1, 13), 1)
        XCTAssertEqual(next(1, 12.9999), 0)
        // Negative side.
        XCTAssertEqual(next(0, -15.0001), 0)
        XCTAssertEqual(next(0, -17), 0)
        XCTAssertEqual(next(0, -17.0001), -1)
        XCTAssertEqual(next(-1, -15), -1)
        XCTAssertEqual(next(-1, -13), -1)
        XCTAssertEqual(next(-1, -12.9999), 0)
    }

    func testHysteresisTwoApproachingSixtyFromBothSides() {
        func next(_ current: Int, _ theta: Double) -> Int {
            AngleRange.next(current: current, angleDegrees: theta, hysteresisDegrees: 2)
        }
        XCTAssertEqual(next(1, 60.0001), 1)
        XCTAssertEqual(next(1, 62), 1)
        XCTAssertEqual(next(1, 62.0001), 2)
        XCTAssertEqual(next(2, 60), 2)
        XCTAssertEqual(next(2, 58), 2)
        XCTAssertEqual(next(2, 57.9999), 1)
        XCTAssertEqual(next(-1, -60.0001), -1)
        XCTAssertEqual(next(-1, -62), -1)
        XCTAssertEqual(next(-1, -62.0001), -2)
        XCTAssertEqual(next(-2, -60), -2)
        XCTAssertEqual(next(-2, -58), -2)
        XCTAssertEqual(next(-2, -57.9999), -1)
    }

    func testBigJumpsCrossSeveralRanges() {
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: 80, hysteresisDegrees: 2), 2)
        XCTAssertEqual(AngleRange.next(current: 2, angleDegrees: -80, hysteresisDegrees: 2), -2)
        XCTAssertEqual(AngleRange.next(current: -2, angleDegrees: 0, hysteresisDegrees: 2), 0)
        // Jump that lands inside the band of the far boundary stops before it.
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: 61, hysteresisDegrees: 2), 1)
    }

    func testBeyondNinetyIsClamped() {
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: 500, hysteresisDegrees: 2), 2)
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: -500, hysteresisDegrees: 2), -2)
        // A huge hysteresis cannot be passed even at ±90: stays put.
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: 500, hysteresisDegrees: 80), 0)
    }

    func testNonFiniteAngleKeepsTheRange() {
        XCTAssertEqual(AngleRange.next(current: 1, angleDegrees: .nan, hysteresisDegrees: 2), 1)
        XCTAssertEqual(AngleRange.next(current: -2, angleDegrees: .infinity, hysteresisDegrees: 2), -2)
        XCTAssertEqual(AngleRange.next(current: nil, angleDegrees: .nan, hysteresisDegrees: 2), 0)
    }

    func testBadHysteresisMeansTheBareTable() {
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: 16, hysteresisDegrees: -3), 1)
        XCTAssertEqual(AngleRange.next(current: 0, angleDegrees: 16, hysteresisDegrees: .nan), 1)
    }
}
