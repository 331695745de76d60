import DriveCore
import XCTest

final class StreamingTests: XCTestCase {
    func testNoStreamingAtSpeedZero() {
        var machine = DriveMachine.running()
        _ = machine.apply([.gear, .steer(30), .function(1)])
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(texts(machine.tick(at: ms(1_000))), [])
    }

    func testOneMinuteWithTicksExactlyAtTheDeadline() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.speedUp, .speedUp], at: .zero), ["M,0,10,1", "M,0,20,1"])
        var sentAt: [Instant] = [.zero]
        let end = Instant.seconds(60)
        while let deadline = machine.nextDeadline, deadline <= end {
            let frames = machine.tick(at: deadline)
            XCTAssertEqual(texts(frames), ["M,0,20,1"])
            sentAt.append(deadline)
        }
        XCTAssertEqual(sentAt.count - 1, 1200)
        for (earlier, later) in zip(sentAt, sentAt.dropFirst()) {
            XCTAssertEqual(later - earlier, .milliseconds(50))
        }
        XCTAssertEqual(machine.nextDeadline, .milliseconds(60_050))
    }

    func testOneMinuteWithLateJitteredTicksStaysOnTheGrid() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        var random = TestRandom(seed: 42)
        var frameCount = 0
        var now = Instant.zero
        while let deadline = machine.nextDeadline, deadline <= .seconds(60) {
            XCTAssertEqual(deadline.nanoseconds % 50_000_000, 0, "deadline \(deadline) is off the 50 ms grid")
            XCTAssertGreaterThan(deadline, now, "the next deadline must lie in the future")
            // Late by 0…49.999 ms: still within the same period.
            now = deadline.advanced(by: .microseconds(random.below(50_000)))
            let frames = machine.tick(at: now)
            XCTAssertEqual(texts(frames), ["M,0,10,1"])
            frameCount += 1
            // A second tick at the same instant must not double up.
            XCTAssertEqual(texts(machine.tick(at: now)), [])
        }
        XCTAssertEqual(frameCount, 1200)
    }

    func testVeryLateTickSendsOneFrameAndSkipsToTheNextGridPoint() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(texts(machine.tick(at: ms(175))), ["M,0,10,1"])
        XCTAssertEqual(machine.nextDeadline, ms(200))
        XCTAssertEqual(texts(machine.tick(at: ms(199))), [])
        XCTAssertEqual(texts(machine.tick(at: ms(200))), ["M,0,10,1"])
        XCTAssertEqual(machine.nextDeadline, ms(250))
        // Exactly on a later grid point: one frame, next one period after it.
        XCTAssertEqual(texts(machine.tick(at: ms(400))), ["M,0,10,1"])
        XCTAssertEqual(machine.nextDeadline, ms(450))
    }

    func testEarlyTickSendsNothing() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: ms(10))
        XCTAssertEqual(texts(machine.tick(at: ms(59))), [])
        XCTAssertEqual(machine.nextDeadline, ms(60))
    }

    func testEventFrameRestartsThePeriod() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(machine.nextDeadline, ms(50))
        XCTAssertEqual(machine.apply([.gear], at: ms(30)), ["B,0,10,0"])
        XCTAssertEqual(machine.nextDeadline, ms(80))
        XCTAssertEqual(texts(machine.tick(at: ms(50))), [], "no stream frame right after an event frame")
        XCTAssertEqual(texts(machine.tick(at: ms(80))), ["B,0,10,0"])
        XCTAssertEqual(machine.apply([.steer(70)], at: ms(95)), ["Y,2,10,0"])
        XCTAssertEqual(machine.nextDeadline, ms(145))
        XCTAssertEqual(machine.apply([.speedUp], at: ms(100)), ["Y,2,20,0"])
        XCTAssertEqual(machine.nextDeadline, ms(150))
    }

    func testFunctionKeyRestartsThePeriod() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(machine.apply([.function(3)], at: ms(20)), ["H,0,10,1"])
        XCTAssertEqual(machine.nextDeadline, ms(70))
        XCTAssertEqual(texts(machine.tick(at: ms(70))), ["M,0,10,1"])
    }

    func testSteerWithoutRangeChangeDoesNotRestartThePeriod() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(machine.apply([.steer(5)], at: ms(20)), [])
        XCTAssertEqual(machine.nextDeadline, ms(50))
    }

    func testSpeedFallingToZeroSendsTheFrameAndStopsStreaming() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(texts(machine.tick(at: ms(50))), ["M,0,10,1"])
        XCTAssertEqual(machine.apply([.speedDown], at: ms(60)), ["M,0,0,1"])
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(texts(machine.tick(at: ms(110))), [])
        XCTAssertEqual(texts(machine.tick(at: ms(10_000))), [])
    }

    func testSetSpeedZeroStopsStreaming() {
        var machine = DriveMachine.running()
        _ = machine.apply([.setSpeed(120)], at: .zero)
        XCTAssertEqual(machine.nextDeadline, ms(50))
        XCTAssertEqual(machine.apply([.setSpeed(0)], at: ms(10)), ["M,0,0,1"])
        XCTAssertNil(machine.nextDeadline)
    }

    func testStreamCarriesTheNewestState() {
        var machine = DriveMachine.running(DriveSettings(period: .milliseconds(100)))
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(machine.nextDeadline, ms(100))
        XCTAssertEqual(machine.apply([.steer(-80)], at: ms(10)), ["L,-2,10,1"])
        XCTAssertEqual(texts(machine.tick(at: ms(110))), ["L,-2,10,1"])
        XCTAssertEqual(machine.nextDeadline, ms(210))
    }
}
