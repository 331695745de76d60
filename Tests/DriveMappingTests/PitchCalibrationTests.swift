import DriveCore
import DriveInputModel
import DriveMapping
import Foundation
import XCTest

/// The calibrate button with a tilt throttle: the pitch of the last gravity sample becomes standing
/// still together with the roll becoming straight ahead, and `tiltNeutrals` reports both for saving.
final class PitchCalibrationTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)
    private func at(_ milliseconds: Int64) -> Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    /// Gravity rolled `roll` degrees over x,z and pitched `pitch` degrees over y,z.
    private func sample(roll: Double, pitch: Double, at time: Instant) -> InputFrame {
        InputFrame(time: time, acceleration: Vector3(x: 9.81 * tan(roll * .pi / 180), y: 9.81 * tan(pitch * .pi / 180), z: 9.81))
    }

    private func calibrateButton(at time: Instant) -> InputFrame {
        InputFrame(time: time, keys: [KeyChange(code: 316 /* BTN_MODE */, pressed: true)])
    }

    private func settings(tiltSteering: Bool) throws -> ControlMapper.Settings {
        ControlMapper.Settings(
            stick: tiltSteering ? nil : .init(), tilt: tiltSteering ? TiltMapper.Settings() : nil,
            buttons: try ButtonMap.parse(bindings: [("BTN_MODE", "calibrate", nil)], resolver: FakeResolver()),
            handsFree: HandsFreeMapper.Settings(throttle: .tilt(
                pitch: TiltMapper.Settings(lateralAxis: .y, verticalAxis: .z),
                lean: LeanThrottleMapper.Settings(deadZone: 6, fullScale: 26, maxSpeed: 120))))
    }

    func testCalibrateSetsThePitchNeutralWithTheRoll() throws {
        var mapper = ControlMapper(settings: try settings(tiltSteering: true))
        XCTAssertEqual(mapper.tiltNeutrals, TiltNeutrals(roll: 0, pitch: 0), "the config's neutrals before calibrating")
        _ = mapper.handle(sample(roll: 10, pitch: 5, at: at(0)), role: .accelerometer)
        XCTAssertEqual(mapper.handle(calibrateButton(at: at(10)), role: .gamepad), [.calibrate, .control(.steer(0))])
        let neutrals = try XCTUnwrap(mapper.tiltNeutrals)
        XCTAssertEqual(try XCTUnwrap(neutrals.roll), 10, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(neutrals.pitch), 5, accuracy: 1e-9)
        // The rig sits pitched 5° forward now: that is standing still, 5° + 12° more is the 40 step.
        mapper.observe(DriveState(engineOn: true))
        XCTAssertEqual(mapper.handle(sample(roll: 10, pitch: 5, at: at(20)), role: .accelerometer), [])
        XCTAssertEqual(mapper.handle(sample(roll: 10, pitch: 17, at: at(40)), role: .accelerometer), [.control(.setSpeed(40))])
    }

    func testCalibrateSetsThePitchNeutralWithoutTiltSteering() throws {
        var mapper = ControlMapper(settings: try settings(tiltSteering: false))
        _ = mapper.handle(sample(roll: 10, pitch: -4, at: at(0)), role: .accelerometer)
        XCTAssertEqual(mapper.handle(calibrateButton(at: at(10)), role: .gamepad), [.calibrate], "no tilt steering: no steer")
        let neutrals = try XCTUnwrap(mapper.tiltNeutrals, "a tilt throttle alone has a neutral to save")
        XCTAssertNil(neutrals.roll)
        XCTAssertEqual(try XCTUnwrap(neutrals.pitch), -4, accuracy: 1e-9)
    }

    func testNoTiltNoNeutrals() throws {
        var mapper = ControlMapper(settings: .init(buttons: try ButtonMap.parse(
            bindings: [("BTN_MODE", "calibrate", nil)], resolver: FakeResolver())))
        XCTAssertEqual(mapper.handle(calibrateButton(at: at(0)), role: .gamepad), [.calibrate])
        XCTAssertNil(mapper.tiltNeutrals)
    }
}
