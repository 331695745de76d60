import DriveMapping
import XCTest

final class ThrottleMapperTests: XCTestCase {
    func testQuantisesToStepsOfTen() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0))
        XCTAssertEqual(mapper.speed(for: 0), 0)
        XCTAssertEqual(mapper.speed(for: 1), 240)
        XCTAssertEqual(mapper.speed(for: 0.5), 120)
        XCTAssertEqual(mapper.speed(for: 0.52), 120, "124.8 → 120")
        XCTAssertEqual(mapper.speed(for: 0.53), 120, "127.2 → 120: rounded down (protocol §4)")
        XCTAssertEqual(mapper.speed(for: 0.54), 120, "129.6 → 120")
        XCTAssertEqual(mapper.speed(for: 0.7), 160, "168 → 160")
        XCTAssertEqual(mapper.speed(for: 0.999), 230, "239.76 → 230")
        for step in 0...100 {
            XCTAssertEqual(mapper.speed(for: Double(step) / 100) % 10, 0)
        }
    }

    func testCapByMaxSpeed() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0, maxSpeed: 100))
        XCTAssertEqual(mapper.speed(for: 0.25), 60)
        XCTAssertEqual(mapper.speed(for: 0.45), 100, "108 → 100, the cap")
        XCTAssertEqual(mapper.speed(for: 0.5), 100)
        XCTAssertEqual(mapper.speed(for: 1), 100)
        let scaled = ThrottleMapper(settings: .init(deadzone: 0, fullScaleSpeed: 100, maxSpeed: 100))
        XCTAssertEqual(scaled.speed(for: 0.5), 50, "full travel can be mapped to the cap instead")
        XCTAssertEqual(ThrottleMapper(settings: .init(maxSpeed: 95)).speed(for: 1), 90, "a cap is a multiple of 10")
    }

    func testDeadzoneAndBadValues() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0.1))
        XCTAssertEqual(mapper.speed(for: 0.1), 0, "the dead zone is rest")
        XCTAssertEqual(mapper.speed(for: 0.11), 20, "past it the value itself: 26.4 → 20, no rescaling")
        XCTAssertEqual(mapper.speed(for: 0.55), 130)  // 132 → 130
        XCTAssertEqual(mapper.speed(for: 1), 240)
        XCTAssertEqual(mapper.speed(for: -1), 0)
        XCTAssertEqual(mapper.speed(for: 3), 240)
        XCTAssertEqual(mapper.speed(for: .nan), 0)
    }

    func testStepsHoldOnABoundaryUntilPassedByTheMargin() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0, hysteresis: 0.25))
        var steps = mapper.makeSteps()
        XCTAssertEqual(mapper.speed(for: 0.5, steps: &steps), 120)
        XCTAssertEqual(mapper.speed(for: 0.495, steps: &steps), 120, "11.88 steps: within a quarter of a step of 12")
        XCTAssertEqual(mapper.speed(for: 0.485, steps: &steps), 110, "11.64: past the boundary by more than the margin")
        XCTAssertEqual(mapper.speed(for: 0.505, steps: &steps), 110, "12.12: not yet")
        XCTAssertEqual(mapper.speed(for: 0.511, steps: &steps), 120, "12.26: yes")
        XCTAssertEqual(mapper.speed(for: 0.99, steps: &steps), 230)
        XCTAssertEqual(mapper.speed(for: 1, steps: &steps), 240, "full travel is full speed, no margin at the end")
        XCTAssertEqual(mapper.speed(for: 0, steps: &steps), 0, "rest")
        XCTAssertEqual(mapper.speed(for: 0.05, steps: &steps), 10, "leaving rest takes the step at once")
        var bare = ThrottleMapper(settings: .init(deadzone: 0, hysteresis: 0)).makeSteps()
        XCTAssertEqual(mapper.speed(for: 0.5, steps: &bare), 120)
        XCTAssertEqual(mapper.speed(for: 0.495, steps: &bare), 110, "hysteresis 0: the bare steps")
    }
}
