import DriveCore
import XCTest

final class CarModelTests: XCTestCase {
    private func m(_ speed: Int, range: Int = 0, direction: Int = 1) -> Frame {
        .motion(range: range, speed: speed, direction: direction)
    }

    func testSteadyDrivingHasNoViolations() {
        var car = CarModel()
        for speed in [0, 10, 20, 30, 30, 30, 20, 10, 0] {
            XCTAssertEqual(car.receive(m(speed)), [])
        }
        XCTAssertEqual(car.frameCount, 9)
        XCTAssertEqual(car.lastMotionSpeed, 0)
    }

    func testSpeedJumpIsAViolationUnlessAllowed() {
        var car = CarModel()
        XCTAssertEqual(car.receive(m(10)), [])
        XCTAssertEqual(car.receive(m(40)), ["speed jumped from 10 to 40 (at most 10 per frame)"])
        XCTAssertEqual(car.receive(m(0)), [])  // a stop is always allowed (docs/protocol.md §8)
        XCTAssertEqual(car.receive(m(30)), ["speed jumped from 0 to 30 (at most 10 per frame)"])
        var throttle = CarModel(allowSpeedJumps: true)
        XCTAssertEqual(throttle.receive(m(10)), [])
        XCTAssertEqual(throttle.receive(m(200)), [])
    }

    func testFunctionFramesDoNotCountAsSpeedSteps() {
        var car = CarModel()
        XCTAssertEqual(car.receive(m(50)), [])  // first frame: nothing to compare with
        XCTAssertEqual(car.receive(Frame(kind: .f1, range: 0, speed: 50, direction: 1)), [])
        XCTAssertEqual(car.receive(m(60)), [])
    }

    func testEngineOffThenSpeedMustStartFromZero() {
        var car = CarModel()
        XCTAssertEqual(car.receive(m(30)), [])
        XCTAssertEqual(car.receive(.engineOff), [])
        XCTAssertFalse(car.engineOn)
        XCTAssertEqual(car.receive(m(30)), ["engine was off: speed must start again from 0 (got S=30)"])
        XCTAssertTrue(car.engineOn)
    }

    func testEngineOffThenFirstStepIsFine() {
        var car = CarModel()
        XCTAssertEqual(car.receive(m(30)), [])
        XCTAssertEqual(car.receive(.engineOff), [])
        XCTAssertEqual(car.receive(m(10)), [])
        XCTAssertEqual(car.receive(m(20)), [])
    }

    func testEngineOffTwiceInARow() {
        var car = CarModel()
        XCTAssertEqual(car.receive(.engineOff), [])
        XCTAssertEqual(car.receive(.engineOff), ["E sent twice"])
        XCTAssertEqual(car.receive(m(0)), [])
        XCTAssertEqual(car.receive(.engineOff), [])
    }

    func testDescribe() {
        XCTAssertEqual(CarModel.describe(m(180, range: 2)), "forward-right at 180")
        XCTAssertEqual(CarModel.describe(m(30, range: -1, direction: 0)), "back-left at 30")
        XCTAssertEqual(CarModel.describe(m(40)), "forward at 40")
        XCTAssertEqual(CarModel.describe(m(40, direction: 0)), "back at 40")
        XCTAssertEqual(CarModel.describe(m(40, range: -2)), "forward-left at 40")
        XCTAssertEqual(CarModel.describe(m(40, range: 1, direction: 0)), "back-right at 40")
        XCTAssertEqual(CarModel.describe(m(0)), "stopped (forward, straight)")
        XCTAssertEqual(CarModel.describe(m(0, range: -1, direction: 0)), "stopped (reverse, left)")
        XCTAssertEqual(CarModel.describe(Frame(kind: .f2, range: 0, speed: 0, direction: 1)), "F2 pressed")
        XCTAssertEqual(CarModel.describe(Frame(kind: .f1, range: 0, speed: 0, direction: 1)), "F1 pressed")
        XCTAssertEqual(CarModel.describe(Frame(kind: .f5, range: 0, speed: 0, direction: 1)), "F5 pressed")
        XCTAssertEqual(CarModel.describe(.engineOff), "engine off")
    }
}
