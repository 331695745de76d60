import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

@testable import DriveInput

/// One trigger, two paths: an 8BitDo Lite 2's right trigger (`ABS_GAS`, 0…255, flat 15) read as the
/// kernel gives it (a `[throttle] axis = "ABS_GAS"` config) and through its GameControllerDB layout
/// (`righttrigger:a4` → `ABS_RZ`). One physical position must give one value and one speed.
final class TriggerPathsTests: XCTestCase {
    private let gas: UInt16 = 0x09
    private let rz: UInt16 = 0x05
    private let trigger = AbsInfo(minimum: 0, maximum: 255, flat: 15)

    private func translator() throws -> PadTranslator {
        let line = "03000000c82d00001251000011010000,8BitDo Lite 2,a:b1,b:b0,back:b10,dpdown:h0.4,dpleft:h0.8,"
            + "dpright:h0.2,dpup:h0.1,guide:b12,leftshoulder:b6,leftstick:b13,lefttrigger:a5,leftx:a0,lefty:a1,"
            + "rightshoulder:b7,rightstick:b14,righttrigger:a4,rightx:a2,righty:a3,start:b11,x:b4,y:b3,platform:Linux,"
        let mapping = try XCTUnwrap(GameControllerMapping.parse(line: line))
        let stick = AbsInfo(minimum: 0, maximum: 255, flat: 15)
        let hat = AbsInfo(minimum: -1, maximum: 1)
        // xpad-like codes: X, Y, Z, RZ (sticks), GAS, BRAKE (triggers), the hat.
        let axes: [UInt16: AbsInfo] = [0x00: stick, 0x01: stick, 0x02: stick, 0x05: stick, gas: trigger, 0x0a: trigger, 0x10: hat, 0x11: hat]
        let info = InputDeviceInfo(name: "8BitDo Lite 2", keys: Set(0x130...0x13e), axes: axes)
        let layout = PadLayout(mapping: mapping, info: info, origin: .database(name: mapping.name, source: .shipped, line: 1))
        XCTAssertEqual(layout.missing, [])
        return PadTranslator(layout: layout, absInfo: axes)
    }

    /// The kernel's frame for raw `raw` on `ABS_GAS`, normalised as the frame assembler does.
    private func frame(_ raw: Int32, at milliseconds: Int64) -> InputFrame {
        let value = trigger.normalise(raw, shape: trigger.defaultShape(forCode: gas))
        return InputFrame(time: .milliseconds(milliseconds), axes: [AxisValue(code: gas, value: value, raw: raw)])
    }

    /// The speed after each frame (the last one asked for), mapped with a throttle on `axis`.
    private func speeds(_ frames: [InputFrame], axis: UInt16) -> [Int] {
        var mapper = ControlMapper(settings: .init(throttle: ThrottleMapper.Settings(axisCode: axis)))
        var speed = 0
        return frames.map { frame in
            var events: [MappedEvent] = []
            mapper.handle(frame, role: .gamepad, into: &events)
            for case .control(.setSpeed(let asked)) in events { speed = asked }
            return speed
        }
    }

    func testTheSameRawTriggerGivesTheSameSpeedOnBothPaths() throws {
        var pad = try translator()
        let raws: [Int32] = [255, 200, 128, 64, 20, 0, 64, 128]
        let frames = raws.enumerated().map { frame($0.element, at: Int64($0.offset) * 50) }
        // A frame that changes nothing in the standard layout is not passed on (raw 20 and 0 are both rest).
        let translated = frames.compactMap { pad.translate($0) }
        var lastValue = 0.0
        for own in frames {
            if let standard = translated.first(where: { $0.time == own.time }) {
                XCTAssertEqual(standard.axes.map(\.code), [rz], "righttrigger is ABS_RZ")
                lastValue = standard.axes.first?.value ?? .nan
            }
            XCTAssertEqual(lastValue, own.axes[0].value, accuracy: 1e-12,
                           "raw \(own.axes[0].raw): the value the mapping uses is the kernel's, range and flat as they are")
        }
        let direct = speeds(frames, axis: gas)
        XCTAssertEqual(direct, [240, 180, 110, 40, 0, 0, 40, 110], "protocol §4: the value × 240, rounded down")
        let standard = frames.map { own in speedsByTime(translated)[own.time] }
        XCTAssertEqual(fill(standard), direct, "one position, one speed, whichever path")
    }

    /// The speed after each translated frame, by its time.
    private func speedsByTime(_ frames: [InputFrame]) -> [Instant: Int] {
        Dictionary(uniqueKeysWithValues: zip(frames.map(\.time), speeds(frames, axis: rz)))
    }

    /// Each missing speed (no translated frame: nothing changed) is the one before it.
    private func fill(_ speeds: [Int?]) -> [Int] {
        var last = 0
        return speeds.map { speed in
            last = speed ?? last
            return last
        }
    }
}
