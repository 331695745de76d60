import DriveMapping
import XCTest

final class ThrottleMapperTests: XCTestCase {
    func testQuantisesToStepsOfTen() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0))
        XCTAssertEqual(mapper.speed(for: 0), 0)
        XCTAssertEqual(mapper.speed(for: 1), 240)
        XCTAssertEqual(mapper.speed(for: 0.5), 120)
        XCTAssertEqual(mapper.speed(for: 0.52), 120, "124.8 → 120")
        XCTAssertEqual(mapper.speed(for: 0.53), 130, "127.2 → 130")
        XCTAssertEqual(mapper.speed(for: 0.999), 240, "a trigger that never quite reaches 1 still gives full speed")
        for step in 0...100 {
            XCTAssertEqual(mapper.speed(for: Double(step) / 100) % 10, 0)
        }
    }

    func testCapByMaxSpeed() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0, maxSpeed: 100))
        XCTAssertEqual(mapper.speed(for: 0.25), 60)
        XCTAssertEqual(mapper.speed(for: 0.5), 100)
        XCTAssertEqual(mapper.speed(for: 1), 100)
        let scaled = ThrottleMapper(settings: .init(deadzone: 0, fullScaleSpeed: 100, maxSpeed: 100))
        XCTAssertEqual(scaled.speed(for: 0.5), 50, "full travel can be mapped to the cap instead")
        XCTAssertEqual(ThrottleMapper(settings: .init(maxSpeed: 95)).speed(for: 1), 90, "a cap is a multiple of 10")
    }

    func testDeadzoneAndBadValues() {
        let mapper = ThrottleMapper(settings: .init(deadzone: 0.1))
        XCTAssertEqual(mapper.speed(for: 0.1), 0)
        XCTAssertEqual(mapper.speed(for: 0.55), 120)  // (0.55−0.1)/0.9 = 0.5
        XCTAssertEqual(mapper.speed(for: 1), 240)
        XCTAssertEqual(mapper.speed(for: -1), 0)
        XCTAssertEqual(mapper.speed(for: 3), 240)
        XCTAssertEqual(mapper.speed(for: .nan), 0)
    }
}
