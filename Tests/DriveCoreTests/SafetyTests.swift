import DriveCore
import XCTest

final class SafetyTests: XCTestCase {
    // MARK: Input lost

    func testInputLostStopPolicy() {
        var machine = DriveMachine.running()
        _ = machine.apply([.steer(30), .speedUp, .speedUp], at: .zero)
        XCTAssertEqual(machine.apply([.inputLost], at: ms(10)), ["R,1,0,1"])
        XCTAssertTrue(machine.state.engineOn)
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.inputLost], at: ms(20)), ["R,1,0,1"], "stop frame even when S is already 0")
    }

    func testInputLostEngineOffPolicy() {
        var machine = DriveMachine.running(DriveSettings(onInputLost: .engineOff))
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(machine.apply([.inputLost], at: ms(10)), ["E,0,0,0"])
        XCTAssertFalse(machine.state.engineOn)
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.inputLost], at: ms(20)), [])
    }

    // MARK: Link

    func testLinkLostThenUpNeedsTheDriverToActAgain() {
        var machine = DriveMachine.running()
        _ = machine.apply([.setSpeed(80)], at: .zero)
        XCTAssertEqual(machine.apply([.linkLost], at: ms(10)), [])
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertTrue(machine.state.engineOn)
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.linkUp], at: ms(2_000)), ["M,0,0,1"], "the handshake: the stop frame")
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(texts(machine.tick(at: ms(5_000))), [], "no motion resumes by itself")
        XCTAssertEqual(machine.apply([.speedUp], at: ms(6_000)), ["M,0,10,1"])
    }

    // MARK: Safety handshake (§6)

    func testFirstLinkUpWithEngineOffSendsEngineOff() {
        var machine = DriveMachine()
        XCTAssertFalse(machine.linkIsUp)
        XCTAssertEqual(machine.apply([.linkUp], at: .zero), ["E,0,0,0"])
        XCTAssertTrue(machine.linkIsUp)
        XCTAssertNil(machine.nextDeadline)
    }

    func testEveryReconnectStartsWithTheCurrentState() {
        var machine = DriveMachine.running()
        _ = machine.apply([.gear, .steer(-70), .setSpeed(50)], at: .zero)
        XCTAssertEqual(machine.apply([.linkLost], at: ms(100)), [])
        XCTAssertEqual(machine.apply([.linkUp], at: ms(600)), ["X,-2,0,0"], "stop frame with the current A and D")
        XCTAssertEqual(machine.state.speed, 0)
        _ = machine.apply([.engine], at: ms(700))
        XCTAssertEqual(machine.apply([.linkLost, .linkUp], at: ms(800)), ["E,0,0,0"], "engine off: E again")
    }

    func testNothingIsSentAndNoMotionStartsWhileTheLinkIsDown() {
        var machine = DriveMachine()
        XCTAssertEqual(machine.apply([.engine, .speedUp, .setSpeed(80), .gear, .function(2), .steer(70)]), [])
        XCTAssertEqual(machine.state.speed, 0, "Speed+ and throttle are ignored before the link is up")
        XCTAssertEqual(machine.state.direction, 0, "other controls still change the state")
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.linkUp], at: ms(10)), ["Y,2,0,0"])
        XCTAssertEqual(machine.apply([.speedUp], at: ms(20)), ["Y,2,10,0"])
        _ = machine.apply([.linkLost], at: ms(30))
        XCTAssertEqual(machine.apply([.speedUp, .setSpeed(100), .engine], at: ms(40)), [], "engine off while down: not sent")
        XCTAssertFalse(machine.state.engineOn)
        XCTAssertEqual(machine.apply([.linkUp], at: ms(50)), ["E,0,0,0"], "the car learns it at the handshake")
    }

    // MARK: Suspend (SIGTSTP)

    func testSuspendStopsTheCarButKeepsTheEngineOn() {
        var machine = DriveMachine.running()
        _ = machine.apply([.steer(30), .setSpeed(50)], at: .zero)
        XCTAssertEqual(machine.apply([.suspend], at: ms(10)), ["R,1,0,1"])
        XCTAssertTrue(machine.state.engineOn)
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.speedUp], at: ms(20)), ["R,1,10,1"], "after SIGCONT the driver acts again")
    }

    // MARK: Input missing

    func testNoSpeedUpOrThrottleWhileTheSteeringDeviceIsMissing() {
        var machine = DriveMachine.running()
        _ = machine.apply([.steer(30), .setSpeed(50)], at: .zero)
        XCTAssertEqual(machine.apply([.inputLost], at: ms(10)), ["R,1,0,1"])
        XCTAssertEqual(machine.apply([.speedUp, .setSpeed(100)], at: ms(20)), [], "θ is frozen: no motion")
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertEqual(machine.apply([.gear, .function(1)], at: ms(30)), ["Y,1,0,0", "F,1,0,0"])
        XCTAssertEqual(machine.apply([.inputRestored, .speedUp], at: ms(40)), ["Y,1,10,0"])
    }

    // MARK: Shutdown

    func testShutdownWithEngineOnSendsEOnce() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(machine.apply([.shutdown], at: ms(1)), ["E,0,0,0"])
        XCTAssertFalse(machine.state.engineOn)
        XCTAssertEqual(machine.apply([.shutdown, .engine, .engine], at: ms(2)).filter { $0 == "E,0,0,0" }.count, 1,
                       "only the later on → off sends E again")
        XCTAssertEqual(machine.apply([.shutdown], at: ms(3)), [])
    }

    // MARK: Idle timeout

    func testIdleTimeoutFiresAtTheExactInstantNotEarlier() {
        var machine = DriveMachine.running(DriveSettings(idleTimeout: .seconds(10)), at: .zero)
        XCTAssertEqual(machine.nextDeadline, .seconds(10))
        XCTAssertEqual(texts(machine.tick(at: Instant(nanoseconds: 9_999_999_999))), [])
        XCTAssertTrue(machine.state.engineOn)
        XCTAssertEqual(texts(machine.tick(at: .seconds(10))), ["E,0,0,0"])
        XCTAssertFalse(machine.state.engineOn)
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(texts(machine.tick(at: .seconds(30))), [])
    }

    func testIdleTimeoutOffByDefault() {
        var machine = DriveMachine.running()
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(texts(machine.tick(at: .seconds(100_000))), [])
        XCTAssertTrue(machine.state.engineOn)
    }

    func testActivityPostponesIdleTimeout() {
        var machine = DriveMachine.running(DriveSettings(idleTimeout: .seconds(10)), at: .zero)
        _ = machine.handle(.gear, at: .seconds(4))
        XCTAssertEqual(machine.nextDeadline, .seconds(14))
        _ = machine.handle(.speedDown, at: .seconds(6))  // a no-op control still counts
        XCTAssertEqual(machine.nextDeadline, .seconds(16))
        _ = machine.handle(.function(5), at: .seconds(7))
        XCTAssertEqual(machine.nextDeadline, .seconds(17))
        XCTAssertEqual(texts(machine.tick(at: .seconds(16))), [])
        XCTAssertEqual(texts(machine.tick(at: .seconds(17))), ["E,0,0,0"])
    }

    func testSmallSteerIsNotActivityButLargeOrRangeChangingSteerIs() {
        var machine = DriveMachine.running(DriveSettings(idleTimeout: .seconds(10)), at: .zero)
        _ = machine.handle(.steer(3), at: .seconds(1))
        XCTAssertEqual(machine.nextDeadline, .seconds(10), "3° < 5° threshold")
        _ = machine.handle(.steer(-4), at: .seconds(2))
        XCTAssertEqual(machine.nextDeadline, .seconds(10), "measured from θ at the last activity (0°)")
        _ = machine.handle(.steer(5), at: .seconds(3))
        XCTAssertEqual(machine.nextDeadline, .seconds(13))
        _ = machine.handle(.steer(9), at: .seconds(4))
        XCTAssertEqual(machine.nextDeadline, .seconds(13), "4° from 5°")
        let frames = machine.handle(.steer(16), at: .seconds(5))  // 16 < 15 + 2: A stays 0
        XCTAssertEqual(texts(frames), [])
        XCTAssertEqual(machine.nextDeadline, .seconds(15), "moved ≥ 5°")
    }

    func testRangeChangeIsActivityEvenWhenTheMoveIsSmall() {
        var machine = DriveMachine.running(
            DriveSettings(hysteresisDegrees: 0, idleTimeout: .seconds(10), activityThresholdDegrees: 5), at: .zero)
        _ = machine.handle(.steer(13), at: .seconds(1))
        XCTAssertEqual(machine.nextDeadline, .seconds(11))
        XCTAssertEqual(texts(machine.handle(.steer(16), at: .seconds(2))), ["R,1,0,1"])
        XCTAssertEqual(machine.nextDeadline, .seconds(12))
    }

    func testIdleTimeoutWhileStreaming() {
        var machine = DriveMachine.running(DriveSettings(idleTimeout: .milliseconds(120)), at: .zero)
        _ = machine.apply([.speedUp], at: .zero)
        var sent: [String] = []
        while let deadline = machine.nextDeadline {
            sent += texts(machine.tick(at: deadline))
        }
        XCTAssertEqual(sent, ["M,0,10,1", "M,0,10,1", "E,0,0,0"])  // at 50, 100, then E at 120
        XCTAssertFalse(machine.state.engineOn)
    }

    func testLateTickSendsDueStreamFrameBeforeIdleEngineOff() {
        var machine = DriveMachine.running(DriveSettings(idleTimeout: .milliseconds(70)), at: .zero)
        _ = machine.apply([.speedUp], at: .zero)
        XCTAssertEqual(texts(machine.tick(at: ms(90))), ["M,0,10,1", "E,0,0,0"])
        XCTAssertNil(machine.nextDeadline)
    }

    func testIdleTimerOnlyRunsWhileEngineOn() {
        var machine = DriveMachine.connected(DriveSettings(idleTimeout: .seconds(1)))
        _ = machine.handle(.gear, at: .zero)
        XCTAssertNil(machine.nextDeadline)
        _ = machine.handle(.engine, at: .seconds(5))
        XCTAssertEqual(machine.nextDeadline, .seconds(6))
    }

    // MARK: Dead-man

    func testDeadmanRequired() {
        var machine = DriveMachine.running(DriveSettings(deadmanRequired: true))
        XCTAssertFalse(machine.state.deadmanHeld)
        XCTAssertEqual(machine.apply([.speedUp, .setSpeed(50)], at: ms(1)), [], "not held: no speed")
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertEqual(machine.apply([.deadman(held: true)], at: ms(2)), [], "press sends nothing")
        XCTAssertEqual(machine.apply([.speedUp, .speedUp], at: ms(3)), ["M,0,10,1", "M,0,20,1"])
        XCTAssertEqual(machine.apply([.deadman(held: false)], at: ms(4)), ["M,0,0,1"])
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.deadman(held: false)], at: ms(5)), [], "release at S = 0 sends nothing")
        XCTAssertEqual(machine.apply([.gear], at: ms(6)), ["B,0,0,0"], "gear still works without the dead-man")
    }

    func testDeadmanTrackedWhileEngineOff() {
        var machine = DriveMachine.connected(DriveSettings(deadmanRequired: true))
        XCTAssertEqual(machine.apply([.deadman(held: true), .engine]), [])
        XCTAssertEqual(machine.apply([.speedUp]), ["M,0,10,1"])
    }

    func testDeadmanReleaseWithoutRequirementDoesNothing() {
        var machine = DriveMachine.running()
        _ = machine.apply([.speedUp])
        XCTAssertEqual(machine.apply([.deadman(held: true), .deadman(held: false)]), [])
        XCTAssertEqual(machine.state.speed, 10)
    }

    // MARK: Hysteresis against noise

    func testSensorRestingAtFifteenWithNoiseSendsNothingWithHysteresis() {
        var machine = DriveMachine.running(DriveSettings(hysteresisDegrees: 2))
        var random = TestRandom(seed: 7)
        var sent: [String] = []
        for step in 0..<2_000 {
            sent += texts(machine.handle(.steer(15 + random.real(-1, 1)), at: ms(Int64(step))))
        }
        // The first sample may land on either side; allow at most that one frame.
        XCTAssertLessThanOrEqual(sent.count, 1, "\(sent.prefix(10))")
        var settled = DriveMachine.running(DriveSettings(hysteresisDegrees: 2))
        _ = settled.handle(.steer(15), at: .zero)
        sent = []
        for step in 0..<2_000 {
            sent += texts(settled.handle(.steer(15 + random.real(-1, 1)), at: ms(Int64(step))))
        }
        XCTAssertEqual(sent, [])
    }

    func testSensorRestingAtFifteenWithNoiseChattersWithoutHysteresis() {
        var machine = DriveMachine.running(DriveSettings(hysteresisDegrees: 0))
        var random = TestRandom(seed: 7)
        var count = 0
        for step in 0..<200 {
            count += machine.handle(.steer(15 + random.real(-1, 1)), at: ms(Int64(step))).count
        }
        XCTAssertGreaterThan(count, 20, "the bare table flips on noise; that is why hysteresis exists")
    }
}
