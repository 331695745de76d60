import DriveCore
import XCTest

/// The kiosk turn limit as pure logic: instants are handed in.
final class SessionLimitTests: XCTestCase {
    func testATurnStartsWhenTheEngineGoesOnAndEndsAfterTheLimit() {
        var turn = SessionLimit(limit: .seconds(180))
        XCTAssertNil(turn.deadline)
        turn.follow(engineOn: false, at: .seconds(1))
        XCTAssertNil(turn.deadline, "no turn while the engine is off")
        turn.follow(engineOn: true, at: .seconds(10))
        XCTAssertEqual(turn.deadline, .seconds(190))
        // Later steps with the engine still on do not move the end.
        turn.follow(engineOn: true, at: .seconds(50))
        turn.follow(engineOn: true, at: .seconds(189.999))
        XCTAssertEqual(turn.deadline, .seconds(190))
        XCTAssertFalse(turn.isOver(at: Instant(nanoseconds: Instant.seconds(190).nanoseconds - 1)))
        XCTAssertTrue(turn.isOver(at: .seconds(190)), "over exactly at the limit")
        XCTAssertTrue(turn.isOver(at: .seconds(500)))
    }

    func testEngineOffEndsTheTurnAndTheNextEngineOnStartsANewOne() {
        var turn = SessionLimit(limit: .seconds(60))
        turn.follow(engineOn: true, at: .seconds(0))
        turn.follow(engineOn: false, at: .seconds(60))  // the limit turned it off
        XCTAssertNil(turn.deadline)
        XCTAssertFalse(turn.isOver(at: .seconds(1000)), "no turn, nothing is over")
        turn.follow(engineOn: true, at: .seconds(75))
        XCTAssertEqual(turn.deadline, .seconds(135), "a full new turn from the next Engine press")
        XCTAssertFalse(turn.isOver(at: .seconds(100)))
    }

    func testADriverWhoStopsEarlyStartsAFreshTurn() {
        var turn = SessionLimit(limit: .seconds(60))
        turn.follow(engineOn: true, at: .seconds(0))
        turn.follow(engineOn: false, at: .seconds(30))
        turn.follow(engineOn: true, at: .seconds(31))
        XCTAssertEqual(turn.deadline, .seconds(91))
    }
}
