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

    /// The machine ends the turn itself: at the limit its deadline is due, and that tick sends the stop frame
    /// and `E,0,0,0` in place of the stream frame due at the same instant (never three frames).
    func testTheMachineEndsATurnWithTheStopFrameThenEngineOffInsteadOfAStreamFrame() {
        var machine = DriveMachine(settings: DriveSettings(period: .milliseconds(50)), sessionLimit: .milliseconds(1500))
        _ = machine.handle(.linkUp, at: ms(0))
        XCTAssertEqual(texts(machine.handle(.engine, at: ms(0))), [])
        XCTAssertEqual(texts(machine.handle(.speedUp, at: ms(0))), ["M,0,10,1"])
        var sent: [String] = []
        var now = ms(0)
        while let deadline = machine.nextDeadline, deadline <= ms(1500) {
            now = deadline
            sent += texts(machine.tick(at: now))
        }
        XCTAssertEqual(now, ms(1500), "the turn's end is a deadline of the machine")
        XCTAssertEqual(sent.count, 31, "29 stream frames, then the turn's end")
        XCTAssertEqual(Array(sent.suffix(3)), ["M,0,10,1", "M,0,0,1", "E,0,0,0"])
        XCTAssertEqual(machine.lastTimedStop, .turnLimit(.milliseconds(1500)))
        XCTAssertFalse(machine.state.engineOn)
        XCTAssertNil(machine.nextDeadline, "nothing is scheduled with the engine off")
        // The next Engine press starts a new, whole turn.
        _ = machine.handle(.engine, at: ms(2000))
        XCTAssertEqual(machine.nextDeadline, ms(3500))
        XCTAssertEqual(texts(machine.tick(at: ms(3500))), ["E,0,0,0"], "engine on at S = 0: only E,0,0,0")
    }
}
