import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

@testable import DriveInput

/// Frames in a pad's own codes → frames in the kernel's gamepad layout, following SDL's rules for
/// half axes, inversion, hats and digital triggers.
final class PadTranslatorTests: XCTestCase {
    private let byteAxis = AbsInfo(minimum: 0, maximum: 255)
    private let t = Instant(nanoseconds: 0)

    private func translator(_ line: String, keys: Set<UInt16>, axes: [UInt16: AbsInfo]) throws -> PadTranslator {
        let mapping = try XCTUnwrap(GameControllerMapping.parse(line: line))
        let info = InputDeviceInfo(name: "pad", keys: keys, axes: axes)
        let layout = PadLayout(mapping: mapping, info: info, origin: .database(name: mapping.name, source: .shipped, line: 1))
        XCTAssertEqual(layout.missing, [])
        return PadTranslator(layout: layout, absInfo: axes)
    }

    private func axis(_ code: UInt16, _ raw: Int32) -> InputFrame {
        InputFrame(time: t, axes: [AxisValue(code: code, value: 0, raw: raw)])
    }

    func testAD_padMadeOfHalfAxesBecomesTheHat() throws {
        // A Retro Controller: the D-pad is axes 0 and 1 (dpleft:-a0, dpright:+a0, dpup:-a1, dpdown:+a1): a
        // half axis drives a direction when past the middle of its half (SDL's threshold).
        var pad = try translator(
            "03000000790000001100000010010000,Retro Controller,a:b1,dpdown:+a1,dpleft:-a0,dpright:+a0,dpup:-a1,start:b9,platform:Linux,",
            keys: Set(0x120...0x129), axes: [0: byteAxis, 1: byteAxis])
        XCTAssertEqual(pad.translate(axis(0, 0))?.axes, [AxisValue(code: 0x10, value: -1, raw: -1)], "left")
        XCTAssertNil(pad.translate(axis(0, 10)), "still left: no change")
        XCTAssertEqual(pad.translate(axis(0, 128))?.axes, [AxisValue(code: 0x10, value: 0, raw: 0)], "centre")
        XCTAssertEqual(pad.translate(axis(1, 255))?.axes, [AxisValue(code: 0x11, value: 1, raw: 1)], "down")
        XCTAssertEqual(pad.translate(InputFrame(time: t, keys: [KeyChange(code: 0x129, pressed: true)]))?.keys,
                       [KeyChange(code: 0x13b, pressed: true)], "start:b9 = BTN_BASE4 → BTN_START")
        XCTAssertNil(pad.translate(InputFrame(time: t, keys: [KeyChange(code: 0x12a, pressed: true)])), "unmapped: dropped")
    }

    func testInvertedAxesDigitalTriggersAndHatsToButtons() throws {
        let hat = AbsInfo(minimum: -1, maximum: 1)
        var pad = try translator(
            "03000000790000001100000010010000,P,lefty:a0~,lefttrigger:b0,righttrigger:a1,a:h0.4,platform:Linux,",
            keys: [0x120], axes: [0: byteAxis, 1: byteAxis, 0x10: hat, 0x11: hat])
        // SDL's axes: a0 = ABS_X, a1 = ABS_Y (the hat is h0). a0~: the input range swapped: raw 0 (up on the pad) is +1 after the inversion.
        XCTAssertEqual(pad.translate(axis(0, 0))?.axes, [AxisValue(code: 1, value: 1, raw: 32767)], "lefty is ABS_Y")
        // A full-range axis as a trigger: its whole range is 0…1.
        XCTAssertEqual(pad.translate(axis(1, 0))?.axes, [AxisValue(code: 5, value: 0, raw: 0)], "righttrigger is ABS_RZ")
        XCTAssertEqual(pad.translate(axis(1, 255))?.axes.map(\.value), [1])
        XCTAssertNil(pad.translate(axis(1, 255)), "no change, no frame")
        // A trigger from a button is BTN_TL2.
        XCTAssertEqual(pad.translate(InputFrame(time: t, keys: [KeyChange(code: 0x120, pressed: true)]))?.keys,
                       [KeyChange(code: 0x138, pressed: true)])
        // a:h0.4: the hat's down bit is the south button.
        XCTAssertEqual(pad.translate(axis(0x11, 1))?.keys, [KeyChange(code: 0x130, pressed: true)])
        XCTAssertEqual(pad.translate(axis(0x11, 0))?.keys, [KeyChange(code: 0x130, pressed: false)])
    }
}
