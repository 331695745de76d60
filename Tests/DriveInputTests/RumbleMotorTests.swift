import XCTest

@testable import DriveInput

/// Pads without force feedback are skipped: no motor, and nothing closed twice.
final class RumbleMotorTests: XCTestCase {
    func testANodeWithoutForceFeedbackGivesNoMotor() {
        // /dev/null opens for writing but answers no EVIOCGBIT: the failed init must close its fd once
        // (a failable class init still runs deinit; the first kernel run trapped on a second close).
        XCTAssertNil(RumbleMotor(path: "/dev/null", patterns: [RumbleMotor.Pattern(strong: 1, weak: 1, length: .milliseconds(100))], strength: 1))
        XCTAssertNil(RumbleMotor(path: "/nonexistent/event0", patterns: [], strength: 1))
    }
}
