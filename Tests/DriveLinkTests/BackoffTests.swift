import DriveLink
import XCTest

final class BackoffTests: XCTestCase {
    func testSequenceDoublesUpToFiveSeconds() {
        var backoff = Backoff()
        let delays = (0..<7).map { _ in backoff.next() }
        XCTAssertEqual(
            delays,
            [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5)])
    }

    func testResetStartsAgain() {
        var backoff = Backoff()
        _ = backoff.next()
        _ = backoff.next()
        _ = backoff.next()
        backoff.reset()
        XCTAssertEqual(backoff.next(), .milliseconds(500))
        XCTAssertEqual(backoff.next(), .seconds(1))
    }
}
