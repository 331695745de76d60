import DriveCore
import DriveSystem
import XCTest

final class DeadlineTimerTests: XCTestCase {
    func testFiresAtTheArmedDeadlineOnce() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var fired: [Instant] = []
        let timer = DeadlineTimer(loop: loop) { fired.append(loop.now()) }
        timer.arm(at: start + .milliseconds(50))
        XCTAssertEqual(timer.deadline, start + .milliseconds(50))
        XCTAssertEqual(loop.nextTimerDeadline, start + .milliseconds(50))
        try loop.advance(by: .milliseconds(49))
        XCTAssertEqual(fired, [])
        try loop.advance(by: .milliseconds(51))
        XCTAssertEqual(fired, [start + .milliseconds(50)])
        XCTAssertNil(timer.deadline)
        XCTAssertNil(loop.nextTimerDeadline)
    }

    func testAnActionSetLaterRunsFromThenOn() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var fired: [String] = []
        let timer = DeadlineTimer(loop: loop)
        timer.arm(at: start + .milliseconds(10))
        try loop.advance(by: .milliseconds(20))
        XCTAssertNil(timer.deadline, "with no action yet the deadline passes and nothing runs")
        timer.setAction { fired.append("first") }
        timer.arm(at: start + .milliseconds(30))
        try loop.advance(by: .milliseconds(20))
        timer.setAction { fired.append("second") }
        timer.arm(at: start + .milliseconds(50))
        try loop.advance(by: .milliseconds(20))
        XCTAssertEqual(fired, ["first", "second"])
    }

    func testSameDeadlineKeepsTheScheduledTimer() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var count = 0
        let timer = DeadlineTimer(loop: loop) { count += 1 }
        // Another timer at the same instant, scheduled after ours: ours must stay first.
        timer.arm(at: start + .milliseconds(20))
        var order: [String] = []
        loop.schedule(at: start + .milliseconds(20)) { order.append("other") }
        timer.arm(at: start + .milliseconds(20))
        let ordered = DeadlineTimer(loop: loop) { order.append("second") }
        ordered.arm(at: start + .milliseconds(30))
        try loop.advance(by: .milliseconds(25))
        XCTAssertEqual(count, 1)
        XCTAssertEqual(order, ["other"])
        try loop.advance(by: .milliseconds(10))
        XCTAssertEqual(order, ["other", "second"])
    }

    func testNewDeadlineReschedulesAndNilDisarms() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var fired: [Instant] = []
        let timer = DeadlineTimer(loop: loop) { fired.append(loop.now()) }
        timer.arm(at: start + .milliseconds(100))
        timer.arm(at: start + .milliseconds(30))
        XCTAssertEqual(loop.nextTimerDeadline, start + .milliseconds(30))
        try loop.advance(by: .milliseconds(200))
        XCTAssertEqual(fired, [start + .milliseconds(30)])
        timer.arm(at: start + .milliseconds(300))
        timer.arm(at: nil)
        XCTAssertNil(timer.deadline)
        XCTAssertNil(loop.nextTimerDeadline)
        try loop.advance(by: .milliseconds(200))
        XCTAssertEqual(fired.count, 1)
    }

    /// The stream period restarts with every frame: a deadline that moves later leaves the loop's timer
    /// where it is, which fires early once and moves on; the action runs once, at the last deadline.
    func testADeadlineMovedLaterRunsTheActionOnceAtTheNewInstant() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var fired: [Instant] = []
        let timer = DeadlineTimer(loop: loop) { fired.append(loop.now()) }
        timer.arm(at: start + .milliseconds(50))
        for step in 1...10 {
            try loop.advance(by: .milliseconds(2))
            timer.arm(at: start + .milliseconds(50 + 2 * step))
        }
        XCTAssertEqual(timer.deadline, start + .milliseconds(70))
        XCTAssertEqual(loop.nextTimerDeadline, start + .milliseconds(50), "no cancel and schedule per move")
        try loop.advance(to: start + .milliseconds(69))
        XCTAssertEqual(fired, [], "the early wake-up did not run the action")
        XCTAssertEqual(loop.nextTimerDeadline, start + .milliseconds(70), "it moved on to the deadline")
        try loop.advance(to: start + .milliseconds(200))
        XCTAssertEqual(fired, [start + .milliseconds(70)])
        XCTAssertNil(timer.deadline)
        XCTAssertNil(loop.nextTimerDeadline)

        // Moved later, then earlier again before the first instant: it fires at the earliest one.
        timer.arm(at: start + .milliseconds(300))
        timer.arm(at: start + .milliseconds(400))
        timer.arm(at: start + .milliseconds(250))
        XCTAssertEqual(loop.nextTimerDeadline, start + .milliseconds(250))
        try loop.advance(to: start + .milliseconds(500))
        XCTAssertEqual(fired, [start + .milliseconds(70), start + .milliseconds(250)])
    }

    /// A timer moved later and then dropped must not run: the loop's early timer is cancelled with it.
    func testDeinitAfterAMoveLaterCancels() throws {
        let loop = try EventLoop(clock: .manual)
        var fired = false
        var timer: DeadlineTimer? = DeadlineTimer(loop: loop) { fired = true }
        timer?.arm(at: loop.now() + .milliseconds(10))
        timer?.arm(at: loop.now() + .milliseconds(30))
        timer = nil
        XCTAssertNil(loop.nextTimerDeadline)
        try loop.advance(by: .milliseconds(50))
        XCTAssertFalse(fired)
    }

    func testActionCanRearm() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var fired: [Instant] = []
        var timer: DeadlineTimer!
        timer = DeadlineTimer(loop: loop) {
            fired.append(loop.now())
            if fired.count < 3 { timer.arm(at: loop.now() + .milliseconds(10)) }
        }
        timer.arm(at: start + .milliseconds(10))
        try loop.advance(by: .milliseconds(100))
        XCTAssertEqual(fired, [start + .milliseconds(10), start + .milliseconds(20), start + .milliseconds(30)])
        timer = nil
    }

    func testDeinitCancels() throws {
        let loop = try EventLoop(clock: .manual)
        var fired = false
        var timer: DeadlineTimer? = DeadlineTimer(loop: loop) { fired = true }
        timer?.arm(at: loop.now() + .milliseconds(10))
        timer = nil
        XCTAssertNil(loop.nextTimerDeadline)
        try loop.advance(by: .milliseconds(20))
        XCTAssertFalse(fired)
    }
}
