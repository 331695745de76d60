import DriveCore
import DriveInputModel
import DriveMapping
import Foundation
import XCTest

/// A racing wheel and its pedals through `ControlMapper` into a real `DriveMachine`, on exact instants: the
/// wheel's angle through its lock to θ, the gas pedal to speed with the speed steps' hysteresis, the brake to
/// a stop (and the gas held off until it was lifted), and the wheel's buttons. Values are as the frame
/// assembler gives them for a G29 (`ABS_X` over the whole range, the pedals mirrored: 0 released, 1 floored).
final class WheelMappingTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)
    private func at(_ milliseconds: Int64) -> Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    private let absX: UInt16 = 0
    private let gas: UInt16 = 2  // ABS_Z
    private let brake: UInt16 = 5  // ABS_RZ
    private let options: UInt16 = 297  // BTN_BASE4
    private let rightPaddle: UInt16 = 292  // BTN_TOP2

    /// A mapper and a machine wired as the runtime wires them; frames the machine sends at once are collected.
    private struct Rig {
        var mapper: ControlMapper
        var machine = DriveMachine()
        var frames: [String] = []
        var controls: [Control] = []

        init(_ settings: ControlMapper.Settings) {
            mapper = ControlMapper(settings: settings)
            _ = machine.handle(.linkUp, at: Instant(nanoseconds: 0))
        }

        mutating func feed(_ frame: InputFrame) {
            mapper.observe(machine.state)
            for case .control(let control) in mapper.handle(frame, role: .gamepad) {
                controls.append(control)
                frames += machine.handle(control, at: frame.time).map(\.text)
            }
        }

        mutating func take() -> [String] {
            defer { frames = [] }
            return frames
        }
    }

    private func settings(lock: Double = 900, range: Double = 90) -> ControlMapper.Settings {
        let buttons = ButtonMap(shortPress: [.key(options): .engine, .key(rightPaddle): .gear])
        return ControlMapper.Settings(
            stick: nil, throttle: ThrottleMapper.Settings(axisCode: gas, brakeAxisCode: brake), buttons: buttons,
            wheel: WheelMapper.Settings(axisCode: absX, lockDegrees: lock, rangeDegrees: range))
    }

    /// `ABS_X` at `degrees` of wheel rotation on a 900° G29 (0…65535), as the assembler normalises it.
    private func wheel(_ degrees: Double, at time: Instant) -> InputFrame {
        let raw = Int32((32767.5 + degrees / 450 * 32767.5).rounded(.down))
        return InputFrame(time: time, axes: [AxisValue(code: absX, value: (Double(raw) - 32767.5) / 32767.5, raw: raw)])
    }

    private func pedal(_ code: UInt16, _ travel: Double, at time: Instant) -> InputFrame {
        InputFrame(time: time, axes: [AxisValue(code: code, value: travel, raw: Int32((255 * (1 - travel)).rounded()))])
    }

    private func press(_ code: UInt16, at time: Instant) -> [InputFrame] {
        [InputFrame(time: time, keys: [KeyChange(code: code, pressed: true)]),
         InputFrame(time: time.advanced(by: .milliseconds(80)), keys: [KeyChange(code: code, pressed: false)])]
    }

    func testTheWheelAngleGivesThetaThroughTheRangeAndStaysAtFullBeyondIt() {
        let mapper = WheelMapper(settings: .init(lockDegrees: 900, rangeDegrees: 90))
        XCTAssertEqual(mapper.angleDegrees(0), 0)
        XCTAssertEqual(mapper.angleDegrees(45.0 / 450), 45, accuracy: 1e-9, "45° of wheel is half of the range")
        XCTAssertEqual(mapper.angleDegrees(-90.0 / 450), -90, accuracy: 1e-9)
        XCTAssertEqual(mapper.angleDegrees(1), 90, "full lock (450°) is still 90")
        XCTAssertEqual(mapper.angleDegrees(-1), -90)
        XCTAssertEqual(mapper.angleDegrees(.nan), 0)
        let whole = WheelMapper(settings: .init(lockDegrees: 1080, rangeDegrees: 540))
        XCTAssertEqual(whole.angleDegrees(0.5), 45, accuracy: 1e-9, "a T300's whole rotation: 270° of wheel is 45°")
        var inverted = mapper.settings
        inverted.invert = true
        XCTAssertEqual(WheelMapper(settings: inverted).angleDegrees(45.0 / 450), -45, accuracy: 1e-9)
    }

    func testTurningTheWheelSteersTheCarThroughTheRanges() {
        var rig = Rig(settings())
        for frame in press(options, at: at(0)) { rig.feed(frame) }
        rig.feed(pedal(gas, 0.25, at: at(100)))
        XCTAssertEqual(rig.take(), ["M,0,60,1"], "0.25 of the gas: 60")
        // 10° of wheel → θ 10 (A 0, nothing); 20° → 20 (A 1); 45° → 45; 70° → 70 (A 2); then back through 0.
        rig.feed(wheel(10, at: at(200)))
        rig.feed(wheel(20, at: at(250)))
        rig.feed(wheel(45, at: at(300)))
        rig.feed(wheel(70, at: at(350)))
        rig.feed(wheel(200, at: at(400)))
        rig.feed(wheel(-30, at: at(450)))
        rig.feed(wheel(-120, at: at(500)))
        XCTAssertEqual(rig.take(), ["R,1,60,1", "R,2,60,1", "L,-1,60,1", "L,-2,60,1"])
        XCTAssertEqual(rig.machine.state.angleDegrees, -90, accuracy: 1e-9)
    }

    func testTheGasOnAStepBoundaryHoldsItsSpeedAndARealMoveChangesIt() {
        var rig = Rig(settings())
        for frame in press(options, at: at(0)) { rig.feed(frame) }
        // 0.25 × 240 = 60 exactly: ±3 % of pedal noise around it would alternate 50/60 without the hysteresis.
        for (index, travel) in [0.25, 0.2425, 0.2575, 0.2425, 0.2575, 0.2425].enumerated() {
            rig.feed(pedal(gas, travel, at: at(100 + Int64(index) * 10)))
        }
        XCTAssertEqual(rig.take(), ["M,0,60,1"], "one frame for the whole dither")
        rig.feed(pedal(gas, 0.5, at: at(200)))
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "a real move lands on its step at once")
        rig.feed(pedal(gas, 1, at: at(300)))
        XCTAssertEqual(rig.take(), ["M,0,240,1"], "floored: full speed")
        rig.feed(pedal(gas, 0, at: at(400)))
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "lifted: the stop frame")
    }

    func testTheBrakeStopsTheCarAndTheGasDrivesAgainOnlyAfterItWasLifted() {
        var rig = Rig(settings())
        for frame in press(options, at: at(0)) { rig.feed(frame) }
        rig.feed(pedal(gas, 0.5, at: at(100)))
        XCTAssertEqual(rig.take(), ["M,0,120,1"])
        rig.feed(pedal(brake, 0.08, at: at(200)))
        XCTAssertEqual(rig.take(), [], "a foot resting on the brake (below a tenth) does nothing")
        rig.feed(pedal(brake, 0.3, at: at(250)))
        XCTAssertEqual(rig.take(), ["M,0,0,1"], "the brake: the stop frame at once")
        XCTAssertEqual(rig.machine.state.speed, 0)
        rig.feed(pedal(gas, 0.8, at: at(300)))
        XCTAssertEqual(rig.take(), [], "the gas does nothing while the brake is pressed")
        rig.feed(pedal(brake, 0.07, at: at(350)))
        rig.feed(pedal(brake, 0, at: at(400)))
        rig.feed(pedal(gas, 0.7, at: at(450)))
        XCTAssertEqual(rig.take(), [], "brake released with the gas still down: the car stays stopped")
        rig.feed(pedal(gas, 0, at: at(500)))
        rig.feed(pedal(gas, 0.5, at: at(600)))
        XCTAssertEqual(rig.take(), ["M,0,120,1"], "gas lifted, then pressed: it drives")
        // Both pedals in one report: the brake wins.
        rig.feed(InputFrame(time: at(700), axes: [
            AxisValue(code: gas, value: 0.9, raw: 25), AxisValue(code: brake, value: 0.5, raw: 128),
        ]))
        XCTAssertEqual(rig.take(), ["M,0,0,1"])
        XCTAssertEqual(rig.machine.state.speed, 0)
    }

    func testTheBrakeWithTheCarStoppedSendsNothingAndTheEngineButtonAndPaddlesWork() {
        var rig = Rig(settings())
        rig.feed(pedal(brake, 1, at: at(0)))
        XCTAssertEqual(rig.take(), [], "engine off: nothing")
        for frame in press(options, at: at(100)) { rig.feed(frame) }
        XCTAssertTrue(rig.machine.state.engineOn, "Options: engine on")
        rig.feed(pedal(brake, 0, at: at(200)))
        for frame in press(rightPaddle, at: at(300)) { rig.feed(frame) }
        XCTAssertEqual(rig.take(), ["B,0,0,0"], "the paddle: Gear (reverse), its event frame")
        rig.feed(pedal(gas, 0.25, at: at(500)))
        XCTAssertEqual(rig.take(), ["B,0,60,0"], "the gas drives backwards in reverse")
        for frame in press(options, at: at(600)) { rig.feed(frame) }
        XCTAssertEqual(rig.take(), ["E,0,0,0"], "Options again: engine off")
        XCTAssertEqual(rig.controls.filter { $0 == .gear }.count, 1)
    }
}
