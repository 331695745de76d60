import DriveMapping
import XCTest

/// The lean → speed rule of the tilt and board throttles: dead zone, full scale, steps of 10, the cap,
/// leaning back with reverse off and on, and the board's sideways lean as steering.
final class LeanThrottleMapperTests: XCTestCase {
    private let mapper = LeanThrottleMapper(settings: .init(deadZone: 5, fullScale: 25, maxSpeed: 240))

    func testDeadZoneIsStandingStill() {
        for lean in [0, 1, -1, 4.99, 5, -5] {
            XCTAssertEqual(mapper.command(for: lean), .stop, "lean \(lean)° is inside the 5° dead zone")
            XCTAssertTrue(mapper.isInDeadZone(lean))
        }
        XCTAssertFalse(mapper.isInDeadZone(5.01))
        XCTAssertFalse(mapper.isInDeadZone(.nan), "no lean is no neutral")
    }

    func testFirstStepJustPastTheDeadZoneAndFullScale() {
        XCTAssertEqual(mapper.command(for: 5.01).speed, 10, "the first lean past the dead zone is the first step")
        XCTAssertEqual(mapper.command(for: 15).speed, 120, "half way between 5° and 25°")
        XCTAssertEqual(mapper.command(for: 25).speed, 240, "full_deg gives max_speed")
        XCTAssertEqual(mapper.command(for: 60).speed, 240, "never above max_speed")
        XCTAssertFalse(mapper.command(for: 15).backwards)
    }

    func testStepsOfTen() {
        var last = 0
        for tenth in 0...400 {
            let speed = mapper.command(for: Double(tenth) / 10).speed
            XCTAssertEqual(speed % 10, 0, "lean \(Double(tenth) / 10)")
            XCTAssertGreaterThanOrEqual(speed, last, "speed grows with the lean")
            last = speed
        }
    }

    func testCapByMaxSpeed() {
        let capped = LeanThrottleMapper(settings: .init(deadZone: 5, fullScale: 25, maxSpeed: 100))
        XCTAssertEqual(capped.command(for: 15).speed, 50)
        XCTAssertEqual(capped.command(for: 25).speed, 100)
        XCTAssertEqual(capped.command(for: 90).speed, 100)
        XCTAssertEqual(LeanThrottleMapper(settings: .init(maxSpeed: 95)).command(for: 90).speed, 90, "a cap is a multiple of 10")
    }

    func testLeaningBackStopsWithoutReverse() {
        XCTAssertEqual(mapper.command(for: -15), .stop)
        XCTAssertEqual(mapper.command(for: -90), .stop)
    }

    func testLeaningBackDrivesBackwardsWithReverse() {
        let reverse = LeanThrottleMapper(settings: .init(deadZone: 5, fullScale: 25, maxSpeed: 240, reverse: true))
        XCTAssertEqual(reverse.command(for: -15), .init(speed: 120, backwards: true))
        XCTAssertEqual(reverse.command(for: -25), .init(speed: 240, backwards: true))
        XCTAssertEqual(reverse.command(for: -4), .stop, "the dead zone holds both ways")
        XCTAssertEqual(reverse.command(for: 15), .init(speed: 120, backwards: false))
    }

    func testBadValues() {
        XCTAssertEqual(mapper.command(for: .nan), .stop)
        XCTAssertEqual(mapper.command(for: .infinity), .stop)
        let inverted = LeanThrottleMapper(settings: .init(deadZone: 10, fullScale: 5))
        XCTAssertEqual(inverted.command(for: 11).speed, 240, "a full scale inside the dead zone: past it is full speed")
    }

    func testBoardFractionsLandOnTheirStep() {
        let board = LeanThrottleMapper(settings: .init(deadZone: 0.1, fullScale: 0.5, maxSpeed: 240))
        XCTAssertEqual(board.command(for: 0.3).speed, 120, "(0.3 − 0.1) / 0.4 is half of 240, not one step more")
        XCTAssertEqual(board.command(for: 0.5).speed, 240)
    }

    func testSidewaysLeanSteers() {
        let board = LeanThrottleMapper(settings: .init(deadZone: 0.1, fullScale: 0.5))
        XCTAssertEqual(board.steeringDegrees(for: 0.05), 0)
        XCTAssertEqual(board.steeringDegrees(for: 0.3), 45, accuracy: 1e-9)
        XCTAssertEqual(board.steeringDegrees(for: -0.5), -90, accuracy: 1e-9)
        XCTAssertEqual(board.steeringDegrees(for: -0.9), -90, accuracy: 1e-9, "full lock at most")
    }
}
