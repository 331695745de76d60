import DriveCore
import XCTest

final class DriveMachineTests: XCTestCase {
    func testInitialState() {
        let machine = DriveMachine()
        XCTAssertEqual(machine.state, DriveState(engineOn: false, speed: 0, direction: 1, angleDegrees: 0, range: 0, deadmanHeld: false))
        XCTAssertNil(machine.nextDeadline)
    }

    // MARK: Customer examples (docs/protocol.md §2)

    func testExampleForwardTenDegreesSpeedForty() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.steer(10)]), [])  // A stays 0: no frame
        let frames = machine.apply([.speedUp, .speedUp, .speedUp, .speedUp])
        XCTAssertEqual(frames, ["M,0,10,1", "M,0,20,1", "M,0,30,1", "M,0,40,1"])
    }

    func testExampleBackLeftMinusFiftyDegreesSpeedThirty() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.gear]), ["B,0,0,0"])
        XCTAssertEqual(machine.apply([.steer(-50)]), ["X,-1,0,0"])
        XCTAssertEqual(machine.apply([.speedUp, .speedUp, .speedUp]).last, "X,-1,30,0")
        XCTAssertEqual(FrameEncoder().encode(machine.state.motionFrame), Array("X,-1,30,0\n".utf8))
    }

    func testExampleRightSixtyFiveDegreesSpeedOneEighty() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.steer(65)]), ["R,2,0,1"])
        let frames = machine.apply(Array(repeating: .speedUp, count: 18))
        XCTAssertEqual(frames.count, 18)
        XCTAssertEqual(frames.last, "R,2,180,1")
    }

    func testExampleF2AtRest() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.function(2)]), ["G,0,0,1"])
    }

    func testEveryFunctionKeyCarriesTheCurrentState() {
        var machine = DriveMachine.running()
        _ = machine.apply([.gear, .steer(-70), .speedUp, .speedUp])
        XCTAssertEqual(
            machine.apply([.function(1), .function(2), .function(3), .function(4), .function(5)]),
            ["F,-2,20,0", "G,-2,20,0", "H,-2,20,0", "I,-2,20,0", "J,-2,20,0"])
        XCTAssertEqual(machine.apply([.function(0), .function(6), .function(-1)]), [])
    }

    func testAllSixMotionLetters() {
        var machine = DriveMachine.running(DriveSettings(hysteresisDegrees: 0))
        XCTAssertEqual(machine.apply([.steer(-30), .steer(0), .steer(30)]), ["L,-1,0,1", "M,0,0,1", "R,1,0,1"])
        XCTAssertEqual(machine.apply([.gear]), ["Y,1,0,0"])
        XCTAssertEqual(machine.apply([.steer(0), .steer(-30)]), ["B,0,0,0", "X,-1,0,0"])
    }

    // MARK: Speed

    func testSpeedUpStopsAt240() {
        var machine = DriveMachine.running()
        let frames = machine.apply(Array(repeating: .speedUp, count: 24))
        XCTAssertEqual(frames.last, "M,0,240,1")
        let deadline = machine.nextDeadline
        XCTAssertEqual(machine.apply([.speedUp], at: ms(10)), [])
        XCTAssertEqual(machine.state.speed, 240)
        XCTAssertEqual(machine.nextDeadline, deadline, "a no-op Speed+ must not restart the period")
    }

    func testSpeedDownAtZeroDoesNothing() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.speedDown]), [])
        XCTAssertEqual(machine.state.speed, 0)
        XCTAssertEqual(machine.apply([.speedUp, .speedDown, .speedDown]), ["M,0,10,1", "M,0,0,1"])
    }

    func testMaxSpeedCap() {
        var machine = DriveMachine.running(DriveSettings(maxSpeed: 100))
        let frames = machine.apply(Array(repeating: .speedUp, count: 15))
        XCTAssertEqual(frames.count, 10)
        XCTAssertEqual(frames.last, "M,0,100,1")
        XCTAssertEqual(machine.state.speed, 100)
        XCTAssertEqual(machine.apply([.setSpeed(200)]), [])
        XCTAssertEqual(machine.apply([.setSpeed(95)]), ["M,0,90,1"])
    }

    func testMaxSpeedAbove240IsStill240() {
        var machine = DriveMachine.running(DriveSettings(maxSpeed: 500))
        _ = machine.apply(Array(repeating: .speedUp, count: 30))
        XCTAssertEqual(machine.state.speed, 240)
    }

    func testSetSpeedRoundsDownClampsAndSkipsNoChange() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.setSpeed(57)]), ["M,0,50,1"])
        XCTAssertEqual(machine.apply([.setSpeed(59)]), [])
        XCTAssertEqual(machine.apply([.setSpeed(1000)]), ["M,0,240,1"])
        XCTAssertEqual(machine.apply([.setSpeed(-5)]), ["M,0,0,1"])
        XCTAssertEqual(machine.apply([.setSpeed(9)]), [])
        XCTAssertNil(machine.nextDeadline)
    }

    func testGearTogglesAndSendsEachTime() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.gear, .gear]), ["B,0,0,0", "M,0,0,1"])
    }

    // MARK: Steering

    func testSteerSendsOnlyWhenTheRangeChanges() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.steer(5), .steer(-10), .steer(14)]), [])
        XCTAssertEqual(machine.state.angleDegrees, 14)
        XCTAssertEqual(machine.apply([.steer(40)]), ["R,1,0,1"])
        XCTAssertEqual(machine.apply([.steer(45), .steer(59)]), [])
        XCTAssertEqual(machine.apply([.steer(89)]), ["R,2,0,1"])
    }

    func testSteerClampsAndIgnoresNonFinite() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.steer(400)]), ["R,2,0,1"])
        XCTAssertEqual(machine.state.angleDegrees, 90)
        let before = machine.state
        XCTAssertEqual(machine.apply([.steer(.nan), .steer(-.infinity)]), [])
        XCTAssertEqual(machine.state, before)
    }

    func testFirstSteerUsesTheBareTable() {
        var machine = DriveMachine.running()
        XCTAssertEqual(machine.apply([.steer(16)]), ["R,1,0,1"])
        XCTAssertEqual(machine.apply([.steer(14)]), [], "later steers use the hysteresis")
    }

    // MARK: Engine off

    func testControlsWhileEngineOffChangeNothingAndSendNothing() {
        var machine = DriveMachine.connected()
        let before = machine.state
        let controls: [Control] = [
            .speedUp, .speedDown, .gear, .function(1), .function(2), .function(3), .function(4), .function(5),
            .setSpeed(100), .inputLost, .inputRestored, .suspend, .shutdown,
        ]
        for control in controls {
            XCTAssertEqual(texts(machine.handle(control, at: ms(1))), [], "\(control)")
            XCTAssertEqual(machine.state, before, "\(control)")
            XCTAssertEqual(texts(machine.tick(at: ms(1000))), [])
        }
        XCTAssertNil(machine.nextDeadline)
    }

    func testSteerWhileEngineOffIsTrackedButNotSent() {
        var machine = DriveMachine.connected()
        XCTAssertEqual(machine.apply([.steer(70)]), [])
        XCTAssertEqual(machine.state.angleDegrees, 70)
        XCTAssertEqual(machine.state.range, 2)
        XCTAssertEqual(machine.apply([.engine]), [], "engine on sends nothing by itself")
        XCTAssertEqual(machine.apply([.speedUp]), ["R,2,10,1"])
    }

    func testEngineOffSendsEOnceResetsSpeedKeepsDirectionAndAngle() {
        var machine = DriveMachine.running()
        _ = machine.apply([.gear, .steer(-30), .speedUp, .speedUp])
        XCTAssertEqual(machine.apply([.engine], at: ms(5)), ["E,0,0,0"])
        XCTAssertEqual(machine.state, DriveState(engineOn: false, speed: 0, direction: 0, angleDegrees: -30, range: -1))
        XCTAssertNil(machine.nextDeadline)
        XCTAssertEqual(machine.apply([.shutdown, .inputLost, .suspend, .inputRestored], at: ms(6)), [])
        XCTAssertEqual(texts(machine.tick(at: ms(10_000))), [])
        XCTAssertEqual(machine.apply([.engine], at: ms(7)), [])
        XCTAssertEqual(machine.apply([.speedUp], at: ms(8)), ["X,-1,10,0"], "no lurch: S restarts from 0")
    }

    func testToggleOffTwiceSendsEOncePerOnOffCycle() {
        var machine = DriveMachine.connected()
        XCTAssertEqual(machine.apply([.engine, .engine, .engine, .engine]), ["E,0,0,0", "E,0,0,0"])
        XCTAssertEqual(machine.apply([.engine, .engine, .shutdown, .shutdown]), ["E,0,0,0"])
    }

    func testFrameEncoderTerminators() {
        var machine = DriveMachine.running()
        _ = machine.apply([.setSpeed(40)])
        XCTAssertEqual(FrameEncoder(terminator: .carriageReturnLineFeed).encode(machine.state.motionFrame), Array("M,0,40,1\r\n".utf8))
        XCTAssertEqual(FrameEncoder(terminator: .none).encode(.engineOff), Array("E,0,0,0".utf8))
    }
}
