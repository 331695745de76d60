import DriveCore
import DriveInputModel
import DriveMapping
import Foundation
import XCTest

/// The tilt and board throttles through `ControlMapper` into a real `DriveMachine`, frame by frame:
/// only existing controls, the machine's own safety rules, exact frames.
final class HandsFreeMapperTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)
    private func at(_ milliseconds: Int64) -> Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    /// A mapper and a machine wired as the runtime wires them: the mapper sees the machine's state
    /// before each frame, its controls go to the machine, the frames are collected.
    private struct Rig {
        var mapper: ControlMapper
        var machine = DriveMachine()
        var frames: [String] = []

        init(_ handsFree: HandsFreeMapper.Settings, tilt: TiltMapper.Settings? = nil) {
            mapper = ControlMapper(settings: .init(stick: nil, tilt: tilt, handsFree: handsFree))
            _ = machine.handle(.linkUp, at: Instant(nanoseconds: 0))
        }

        mutating func apply(_ events: [MappedEvent], at now: Instant) {
            for case .control(let control) in events {
                frames += machine.handle(control, at: now).map(\.text)
            }
        }

        mutating func feed(_ frame: InputFrame, role: DeviceRole) {
            mapper.observe(machine.state)
            apply(mapper.handle(frame, role: role), at: frame.time)
        }

        mutating func tick(at now: Instant) {
            mapper.observe(machine.state)
            apply(mapper.tick(at: now), at: now)
        }

        mutating func take() -> [String] {
            defer { frames = [] }
            return frames
        }
    }

    /// Gravity for a pitch of `degrees` over y,z (roll 0 over x,z).
    private func pitch(_ degrees: Double, at time: Instant) -> InputFrame {
        let radians = degrees * .pi / 180
        return InputFrame(time: time, acceleration: Vector3(x: 0, y: 9.81 * sin(radians), z: 9.81 * cos(radians)))
    }

    private func tiltSettings(reverse: Bool = false, arming: HandsFreeArming.Settings? = nil) -> HandsFreeMapper.Settings {
        HandsFreeMapper.Settings(
            throttle: .tilt(
                pitch: TiltMapper.Settings(lateralAxis: .y, verticalAxis: .z),
                lean: LeanThrottleMapper.Settings(deadZone: 5, fullScale: 25, maxSpeed: 240, reverse: reverse)),
            arming: arming)
    }

    func testPitchDrivesTheSpeed() {
        var rig = Rig(tiltSettings())
        _ = rig.machine.handle(.engine, at: at(0))
        rig.feed(pitch(0, at: at(10)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "level: standing still")
        rig.feed(pitch(15, at: at(20)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.feed(pitch(30, at: at(30)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,240,1"], "past full_deg: max_speed")
        rig.feed(pitch(3, at: at(40)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "back to neutral: the stop frame")
        rig.feed(pitch(-20, at: at(50)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "leaning back without reverse: still stopped, no gear")
        XCTAssertEqual(rig.machine.state.direction, 1)
    }

    func testLeaningBackAtSpeedStops() {
        var rig = Rig(tiltSettings())
        _ = rig.machine.handle(.engine, at: at(0))
        rig.feed(pitch(0, at: at(10)), role: .accelerometer)
        rig.feed(pitch(15, at: at(20)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.feed(pitch(-15, at: at(30)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "sitting up is a stop")
        rig.feed(pitch(15, at: at(40)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "after a stop the lean must come back to neutral first")
        rig.feed(pitch(0, at: at(50)), role: .accelerometer)
        rig.feed(pitch(15, at: at(60)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
    }

    func testReverseGoesThroughAStopAndTheGear() {
        var rig = Rig(tiltSettings(reverse: true))
        _ = rig.machine.handle(.engine, at: at(0))
        rig.feed(pitch(0, at: at(10)), role: .accelerometer)
        rig.feed(pitch(15, at: at(20)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.feed(pitch(-15, at: at(30)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,0,1", "B,0,0,0", "B,0,120,0"], "stop, gear, then backwards")
        rig.feed(pitch(-25, at: at(40)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["B,0,240,0"])
        rig.feed(pitch(15, at: at(50)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["B,0,0,0", "M,0,0,1", "M,0,120,1"])
    }

    func testTheThrottleNeverJumpsFromStanding() {
        var rig = Rig(tiltSettings())
        rig.feed(pitch(15, at: at(10)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "engine off: nothing")
        _ = rig.machine.handle(.engine, at: at(20))
        rig.feed(pitch(16, at: at(30)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "the engine came on while leaning: no jump")
        rig.feed(pitch(2, at: at(40)), role: .accelerometer)
        rig.feed(pitch(15, at: at(50)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        // The machine stops by itself (input lost, then back): the throttle waits for neutral again.
        rig.frames += rig.machine.handle(.inputLost, at: at(60)).map(\.text)
        rig.frames += rig.machine.handle(.inputRestored, at: at(70)).map(\.text)
        XCTAssertEqual(rig.take(), ["M,0,0,1"])
        rig.feed(pitch(20, at: at(80)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "still leaning after the stop: nothing")
        rig.feed(pitch(0, at: at(90)), role: .accelerometer)
        rig.feed(pitch(20, at: at(100)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,180,1"])
    }

    func testTiltArmingIsOptInAndNeedsStillness() {
        var rig = Rig(tiltSettings(arming: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5))))
        rig.feed(pitch(0, at: at(0)), role: .accelerometer)
        XCTAssertEqual(rig.mapper.nextDeadline, at(2000))
        rig.feed(pitch(10, at: at(1000)), role: .accelerometer)
        XCTAssertNil(rig.mapper.nextDeadline, "a wobble past the dead zone restarts the count")
        rig.feed(pitch(1, at: at(1500)), role: .accelerometer)
        rig.tick(at: at(3499))
        XCTAssertFalse(rig.machine.state.engineOn)
        rig.tick(at: at(3500))
        XCTAssertTrue(rig.machine.state.engineOn, "held near neutral for 2 s: armed")
        XCTAssertEqual(rig.take(), [], "engine on sends nothing by itself")
        rig.feed(pitch(15, at: at(3600)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
    }

    func testArmingOnALateSampleLetsTheNextLeanDrive() {
        var rig = Rig(tiltSettings(arming: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5))))
        rig.feed(pitch(0, at: at(0)), role: .accelerometer)
        rig.feed(pitch(1, at: at(2500)), role: .accelerometer)
        XCTAssertTrue(rig.machine.state.engineOn, "a sample after arm_after arms without waiting for the timer")
        rig.feed(pitch(15, at: at(2600)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "armed inside the dead zone: the next lean drives")
    }

    // MARK: the board

    /// A board frame: `kilograms` spread so the centre of pressure is (`x`, `y`).
    private func board(_ kilograms: Double, x: Double = 0, y: Double = 0, at time: Instant) -> InputFrame {
        // tr + br − tl − bl = x·W, tr + tl − br − bl = y·W, and tr − br − tl + bl = 0.
        let w = kilograms
        let tr = w * (1 + x + y) / 4, br = w * (1 + x - y) / 4, tl = w * (1 - x + y) / 4, bl = w * (1 - x - y) / 4
        let axes = [(16, tr), (17, br), (18, tl), (19, bl)].map { code, kg in
            AxisValue(code: UInt16(code), value: 0, raw: Int32((kg * 100).rounded()))
        }
        return InputFrame(time: time, axes: axes)
    }

    private func boardSettings() -> HandsFreeMapper.Settings {
        HandsFreeMapper.Settings(
            throttle: .board, boardSteers: true,
            boardLean: .init(deadZone: 0.1, fullScale: 0.5, maxSpeed: 240),
            presence: WeightPresence(minimumKilograms: 20, hysteresisKilograms: 5),
            arming: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5)))
    }

    func testBoardStepOnArmLeanSteerStepOff() {
        var rig = Rig(boardSettings())
        rig.feed(board(60, at: at(0)), role: .board)
        XCTAssertEqual(rig.mapper.nextDeadline, at(2000), "a still rider: the count starts")
        rig.tick(at: at(2000))
        XCTAssertTrue(rig.machine.state.engineOn, "armed after 2 s")
        rig.feed(board(60, y: 0.3, at: at(2100)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "lean forward")
        rig.feed(board(60, x: -0.3, y: 0.3, at: at(2200)), role: .board)
        XCTAssertEqual(rig.take(), ["L,-1,120,1"], "lean left: 45° left")
        rig.feed(board(10, x: -0.3, y: 0.3, at: at(2300)), role: .board)
        XCTAssertEqual(rig.take(), ["L,-1,0,1"], "stepping off at speed: the stop frame at once")
        rig.tick(at: at(7299))
        XCTAssertTrue(rig.machine.state.engineOn)
        rig.tick(at: at(7300))
        XCTAssertEqual(rig.take(), ["E,0,0,0"], "engine off 5 s after stepping off")
    }

    func testBoardHysteresisKeepsALightRider() {
        var rig = Rig(boardSettings())
        rig.feed(board(25, at: at(0)), role: .board)
        rig.tick(at: at(2000))
        rig.feed(board(25, y: 0.3, at: at(2100)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.feed(board(16, y: 0.3, at: at(2200)), role: .board)
        XCTAssertEqual(rig.take(), [], "16 kg is above 20 − 5: still present")
        rig.feed(board(14.9, y: 0.3, at: at(2300)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "below 15 kg: gone, the stop frame")
    }

    func testBoardWaitsForNeutralAfterArming() {
        var rig = Rig(boardSettings())
        rig.feed(board(60, at: at(0)), role: .board)
        rig.feed(board(60, y: 0.05, at: at(1000)), role: .board)
        rig.tick(at: at(2000))
        XCTAssertTrue(rig.machine.state.engineOn, "small sway inside the dead zone does not restart the count")
        rig.feed(board(60, y: 0.05, at: at(2100)), role: .board)
        XCTAssertEqual(rig.take(), [])
        rig.feed(board(60, y: 0.12, at: at(2200)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,20,1"], "a lean just past the dead zone: a small speed")
    }
}
