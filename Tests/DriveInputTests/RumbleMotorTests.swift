import DriveSystem
import XCTest

@testable import DriveInput

/// Pads without force feedback are skipped: no motor, and nothing closed twice; the upload runs on a thread
/// of its own and its result comes back on the loop.
final class RumbleMotorTests: XCTestCase {
    func testANodeWithoutForceFeedbackGivesNoMotor() {
        // /dev/null opens for writing but answers no EVIOCGBIT: the failed init must close its fd once
        // (a failable class init still runs deinit; the first kernel run trapped on a second close).
        XCTAssertNil(RumbleMotor(path: "/dev/null", patterns: [RumbleMotor.Pattern(strong: 1, weak: 1, length: .milliseconds(100))], strength: 1))
        XCTAssertNil(RumbleMotor(path: "/nonexistent/event0", patterns: [], strength: 1))
    }

    func testOpeningOnAThreadHandsTheResultToTheLoopsThread() throws {
        let loop = try EventLoop()
        var delivered: [Bool] = []
        let pattern = RumbleMotor.Pattern(strong: 1, weak: 1, length: .milliseconds(100))
        RumbleMotor.open(path: "/dev/null", patterns: [pattern], strength: 1, loop: loop) { motor in
            delivered.append(loop.isOnLoopThread && motor == nil)
            loop.stop()
        }
        XCTAssertEqual(delivered, [], "not called before the loop runs: the upload is on its own thread")
        try loop.run(until: loop.now().advanced(by: .seconds(10)))
        XCTAssertEqual(delivered, [true], "once, on the loop's thread, with no motor for a node without FF_RUMBLE")
    }
}
