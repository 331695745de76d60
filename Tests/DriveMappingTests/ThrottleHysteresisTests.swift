import DriveCore
import DriveInputModel
import DriveMapping
import Foundation
import XCTest

/// Every analog throttle (a pad's trigger, a tilt rig's pitch, a balance board's lean) held on a speed
/// step's boundary with noise: the stream and nothing more; a real move still changes the speed at once.
/// And the re-arm rule after lost input, for the same three. All on exact instants, through
/// `ControlMapper` into a real `DriveMachine`, as the runtime wires them.
final class ThrottleHysteresisTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)
    private func at(_ milliseconds: Int64) -> Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    /// A mapper and a machine: the mapper sees the machine's state before each frame, its controls go to
    /// the machine, the frames the machine sends at once are collected (the stream is not: `tick` is not run).
    private struct Rig {
        var mapper: ControlMapper
        var machine = DriveMachine()
        var frames: [String] = []

        init(_ settings: ControlMapper.Settings) {
            mapper = ControlMapper(settings: settings)
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

        /// The input of `role` is lost at `now` and comes back: what `InputMapping` does with it.
        mutating func lose(_ role: DeviceRole, at now: Instant) {
            mapper.observe(machine.state)
            apply(mapper.deviceLost(role: role), at: now)
            frames += machine.handle(.inputLost, at: now).map(\.text)
            _ = machine.handle(.inputRestored, at: now)
        }

        mutating func take() -> [String] {
            defer { frames = [] }
            return frames
        }
    }

    /// A noise of `amplitude` (a fraction of the value) around `value`, alternating: +, −, +, …
    private func dithered(_ value: Double, by amplitude: Double, count: Int) -> [Double] {
        (0..<count).map { value * (1 + ($0 % 2 == 0 ? amplitude : -amplitude)) }
    }

    // MARK: a pad's trigger

    private let rz: UInt16 = 5

    private func trigger(_ value: Double, at time: Instant) -> InputFrame {
        InputFrame(time: time, axes: [AxisValue(code: rz, value: value, raw: Int32((value * 255).rounded()))])
    }

    private func padRig() -> Rig {
        var rig = Rig(.init(throttle: ThrottleMapper.Settings(axisCode: rz)))
        _ = rig.machine.handle(.engine, at: at(0))
        return rig
    }

    func testATriggerOnAStepBoundaryHoldsItsSpeedAndARealMoveChangesIt() {
        var rig = padRig()
        // 11/24 of the travel is the boundary between 110 and 120; ±2 % of it is a fifth of a step.
        let boundary = 11.0 / 24
        rig.feed(trigger(boundary, at: at(100)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,110,1"])
        for (index, value) in dithered(boundary, by: 0.02, count: 80).enumerated() {
            rig.feed(trigger(value, at: at(150 + Int64(index) * 50)), role: .gamepad)
        }
        XCTAssertEqual(rig.take(), [], "a trigger dithering around a boundary sends only the stream")
        rig.feed(trigger(0.55, at: at(5000)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,130,1"], "a real move: the new speed at once")
        rig.feed(trigger(boundary, at: at(5050)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,110,1"], "and back")
        rig.feed(trigger(1, at: at(5100)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,240,1"], "full travel is full speed, no margin at the end")
        rig.feed(trigger(0, at: at(5150)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "released: the stop frame")
    }

    func testATriggerHeldThroughLostInputMustComeBackToRest() {
        var rig = padRig()
        rig.feed(trigger(0.5, at: at(100)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.lose(.gamepad, at: at(200))
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "lost input: the stop frame")
        rig.feed(trigger(0.5, at: at(800)), role: .gamepad)
        rig.feed(trigger(0.6, at: at(850)), role: .gamepad)
        XCTAssertEqual(rig.take(), [], "the pad is back with the trigger held: nothing moves")
        rig.feed(trigger(0, at: at(900)), role: .gamepad)
        XCTAssertEqual(rig.take(), [], "released: at rest, nothing to send")
        rig.feed(trigger(0.5, at: at(950)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "pressed again: it drives")
    }

    /// Issue 39: one rest rule for every analog throttle (`ThrottleRest`). A stop the trigger did not ask
    /// for (the engine turned off by a button, the link lost) requires rest as lost input does, as a
    /// phone's stick always has: a trigger held through it does not restart the car when the stop is over.
    /// Against the code before the rule was shared, the held trigger drove again at once (M,0,140,1).
    func testATriggerHeldThroughAStopItDidNotAskForMustComeBackToRest() {
        var rig = padRig()
        rig.feed(trigger(0.5, at: at(100)), role: .gamepad)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.apply([.control(.engine)], at: at(200))
        rig.apply([.control(.engine)], at: at(300))
        _ = rig.take()
        rig.feed(trigger(0.6, at: at(350)), role: .gamepad)
        XCTAssertEqual(rig.take(), [], "held through the engine off and on: nothing moves")
        rig.feed(trigger(0, at: at(400)), role: .gamepad)
        rig.feed(trigger(0.5, at: at(450)), role: .gamepad)
        XCTAssertEqual(rig.take().last, "M,0,120,1", "released and pressed again: it drives")

        rig.frames += rig.machine.handle(.linkLost, at: at(500)).map(\.text)
        rig.frames += rig.machine.handle(.linkUp, at: at(600)).map(\.text)
        _ = rig.take()
        rig.feed(trigger(0.6, at: at(700)), role: .gamepad)
        XCTAssertEqual(rig.take(), [], "held through the link's loss: nothing moves when it is back")
        rig.feed(trigger(0, at: at(750)), role: .gamepad)
        rig.feed(trigger(0.5, at: at(800)), role: .gamepad)
        XCTAssertEqual(rig.take().last, "M,0,120,1")
    }

    func testTheRestRuleItself() {
        var rest = ThrottleRest()
        XCTAssertTrue(rest.admits(40), "a new trigger drives")
        rest.carStopped(speed: 0, asked: 0)
        XCTAssertFalse(rest.needsRest, "the throttle's own stop needs no rest")
        rest.carStopped(speed: 20, asked: 40)
        XCTAssertFalse(rest.needsRest, "slower is not a stop")
        rest.carStopped(speed: 0, asked: 40)
        XCTAssertTrue(rest.needsRest)
        XCTAssertFalse(rest.admits(10))
        XCTAssertTrue(rest.admits(0), "rest ends the wait and is passed on")
        XCTAssertTrue(rest.admits(10))
        var stick = ThrottleRest(needsRest: true)
        XCTAssertFalse(stick.admits(30), "a stick that starts held away from the centre")
        stick.rested()
        XCTAssertTrue(stick.admits(30))
    }

    // MARK: a tilt rig's pitch

    /// Gravity for a pitch of `degrees` over y,z.
    private func pitch(_ degrees: Double, at time: Instant) -> InputFrame {
        let radians = degrees * .pi / 180
        return InputFrame(time: time, acceleration: Vector3(x: 0, y: 9.81 * sin(radians), z: 9.81 * cos(radians)))
    }

    private func tiltRig(arming: HandsFreeArming.Settings? = nil) -> Rig {
        Rig(.init(stick: nil, handsFree: HandsFreeMapper.Settings(
            throttle: .tilt(
                pitch: TiltMapper.Settings(lateralAxis: .y, verticalAxis: .z, filterTimeConstant: .zero),
                lean: LeanThrottleMapper.Settings(deadZone: 5, fullScale: 25, maxSpeed: 240)),
            arming: arming)))
    }

    func testAPitchOnAStepBoundaryHoldsItsSpeed() {
        var rig = tiltRig()
        _ = rig.machine.handle(.engine, at: at(0))
        rig.feed(pitch(0, at: at(10)), role: .accelerometer)
        // 5.85° is where the first step (10) meets the second (20); noise of ±2.9 % around it.
        rig.feed(pitch(5.85, at: at(20)), role: .accelerometer)
        let first = rig.take()
        XCTAssertEqual(first.count, 1)
        for (index, degrees) in dithered(5.85, by: 0.029, count: 80).enumerated() {
            rig.feed(pitch(degrees, at: at(40 + Int64(index) * 20)), role: .accelerometer)
        }
        XCTAssertEqual(rig.take(), [], "a pitch dithering around a boundary sends only the stream")
        rig.feed(pitch(15, at: at(2000)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "a real move: the new speed at once")
    }

    func testTiltRigAfterLostInputArmsAgainOnlyAfterAFullStillHold() {
        var rig = tiltRig(arming: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5)))
        rig.feed(pitch(0, at: at(0)), role: .accelerometer)
        rig.tick(at: at(2000))
        XCTAssertTrue(rig.machine.state.engineOn, "armed after 2 s level")
        rig.feed(pitch(15, at: at(2100)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.lose(.accelerometer, at: at(2200))
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "lost: the stop frame")
        rig.feed(pitch(0, at: at(3000)), role: .accelerometer)
        rig.feed(pitch(0, at: at(3600)), role: .accelerometer)
        rig.tick(at: at(3600))
        rig.feed(pitch(15, at: at(3650)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "back and level 0.6 s: not armed yet, the lean does nothing")
        rig.feed(pitch(0, at: at(3700)), role: .accelerometer)
        rig.tick(at: at(5699))
        rig.feed(pitch(15, at: at(5699)), role: .accelerometer)
        XCTAssertEqual(rig.take(), [], "the wobble restarted the count")
        rig.feed(pitch(0, at: at(5700)), role: .accelerometer)
        rig.tick(at: at(7700))
        rig.feed(pitch(15, at: at(7750)), role: .accelerometer)
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "a full arm_after_s level hold re-arms: the lean drives")
    }

    // MARK: a balance board's lean

    /// A board frame: `kilograms` spread so the centre of pressure is (`x`, `y`), each cell plus `noise` units of 10 g.
    private func board(_ kilograms: Double, y: Double, noise: [Int32] = [0, 0, 0, 0], at time: Instant) -> InputFrame {
        let w = kilograms
        let cells = [w * (1 + y) / 4, w * (1 - y) / 4, w * (1 + y) / 4, w * (1 - y) / 4]
        let axes = cells.enumerated().map { index, kg in
            AxisValue(code: UInt16(16 + index), value: 0, raw: Int32((kg * 100).rounded()) + noise[index])
        }
        return InputFrame(time: time, axes: axes)
    }

    private func boardRig(maxSpeed: Int) -> Rig {
        Rig(.init(stick: nil, handsFree: HandsFreeMapper.Settings(
            throttle: .board, boardLean: .init(deadZone: 0.1, fullScale: 0.5, maxSpeed: maxSpeed),
            presence: WeightPresence(minimumKilograms: 20, hysteresisKilograms: 5),
            arming: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5)))))
    }

    func testABoardLeanAtABoundaryWithTheNoiseOfARealBoardSendsOnlyTheStream() {
        // The rider: 0.30 of full scale at max_speed 120, each cell ±3 units (30 g) of noise.
        var rig = boardRig(maxSpeed: 120)
        rig.feed(board(60, y: 0, at: at(0)), role: .board)
        rig.tick(at: at(2000))
        XCTAssertTrue(rig.machine.state.engineOn)
        rig.feed(board(60, y: 0.3, at: at(2050)), role: .board)
        XCTAssertEqual(rig.take().count, 1, "the lean's speed")
        for report in 0..<84 {
            let n: Int32 = report % 2 == 0 ? 3 : -3
            rig.feed(board(60, y: 0.3, noise: [n, -n, n, -n], at: at(2100 + Int64(report) * 50)), role: .board)
        }
        XCTAssertEqual(rig.take(), [], "a hovering lean sends the stream and nothing more")
    }

    func testABoardLeanDitheringAroundAStepBoundaryHoldsItsSpeed() {
        var rig = boardRig(maxSpeed: 120)
        rig.feed(board(60, y: 0, at: at(0)), role: .board)
        rig.tick(at: at(2000))
        // 0.135 sits where the first step (10) meets the second (20); ±3 % of it.
        rig.feed(board(60, y: 0.135, at: at(2050)), role: .board)
        XCTAssertEqual(rig.take().count, 1)
        for (index, y) in dithered(0.135, by: 0.03, count: 80).enumerated() {
            rig.feed(board(60, y: y, at: at(2100 + Int64(index) * 50)), role: .board)
        }
        XCTAssertEqual(rig.take(), [], "dithering around a boundary: no extra frame")
        rig.feed(board(60, y: 0.3, at: at(6100)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,60,1"], "a real move: the new speed at once")
    }

    func testBoardAfterLostInputArmsAgainOnlyAfterAFullStillHold() {
        var rig = boardRig(maxSpeed: 240)
        rig.feed(board(60, y: 0, at: at(0)), role: .board)
        rig.tick(at: at(2000))
        rig.feed(board(60, y: 0.3, at: at(2100)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.lose(.board, at: at(2200))
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "the board disconnected: the stop frame")
        rig.feed(board(60, y: 0, at: at(3000)), role: .board)
        rig.tick(at: at(3600))
        rig.feed(board(60, y: 0.3, at: at(3600)), role: .board)
        XCTAssertEqual(rig.take(), [], "back and still 0.6 s: a new rider, not armed yet")
        rig.feed(board(60, y: 0, at: at(3650)), role: .board)
        rig.tick(at: at(5650))
        rig.feed(board(60, y: 0.3, at: at(5700)), role: .board)
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "a full arm_after_s still hold re-arms")
    }
}
