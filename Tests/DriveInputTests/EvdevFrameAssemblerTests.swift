import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

@testable import DriveInput

final class EvdevFrameAssemblerTests: XCTestCase {
    let xboxAxes: [UInt16: AbsInfo] = [
        0: AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
        1: AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
        5: AbsInfo(minimum: 0, maximum: 255),
        16: AbsInfo(minimum: -1, maximum: 1),
    ]
    let t = Instant.milliseconds(5)

    func testOneFramePerSynReportWithTheLastValueOfEachAxis() {
        var assembler = EvdevFrameAssembler(absInfo: xboxAxes)
        XCTAssertNil(assembler.feed(TestSupport.abs(0, 1000), at: t))
        XCTAssertNil(assembler.feed(TestSupport.abs(1, -500), at: t))
        XCTAssertNil(assembler.feed(TestSupport.abs(0, 20000), at: t))
        XCTAssertNil(assembler.feed(TestSupport.abs(0, 32767), at: t))
        let frame = assembler.feed(TestSupport.syn, at: t)
        XCTAssertEqual(frame?.time, t)
        XCTAssertEqual(frame?.axes.map(\.code), [0, 1])
        XCTAssertEqual(frame?.axes.first?.raw, 32767)
        XCTAssertEqual(frame?.axes.first?.value ?? 0, 1, accuracy: 1e-9)
    }

    func testKeyChangesKeepTheirOrderAndAutorepeatIsDropped() {
        var assembler = EvdevFrameAssembler(absInfo: [:])
        let frames = assembler.feed(
            [
                TestSupport.key(304, 1), TestSupport.key(305, 1), TestSupport.key(304, 2), TestSupport.key(304, 0),
                TestSupport.syn,
                TestSupport.key(305, 2), TestSupport.syn,  // autorepeat only: no frame
                TestSupport.key(305, 1), TestSupport.syn,  // already down: no frame
            ], at: t)
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(
            frames.first?.keys,
            [KeyChange(code: 304, pressed: true), KeyChange(code: 305, pressed: true), KeyChange(code: 304, pressed: false)])
        XCTAssertEqual(assembler.keysDown, [305])
    }

    func testAnAxisBackAtItsOldValueIsNotReported() {
        var assembler = EvdevFrameAssembler(absInfo: xboxAxes)
        _ = assembler.feed([TestSupport.abs(0, 100), TestSupport.syn], at: t)
        XCTAssertNil(assembler.feed([TestSupport.abs(0, 100), TestSupport.syn], at: t).first)
    }

    func testSynDroppedDiscardsUpToTheNextReportThenReleasesKeysAndReassertsAxes() {
        var assembler = EvdevFrameAssembler(absInfo: xboxAxes)
        _ = assembler.feed([TestSupport.key(304, 1), TestSupport.abs(0, 16000), TestSupport.syn], at: t)
        let frames = assembler.feed(
            [
                TestSupport.abs(1, 999),  // part of a report that SYN_DROPPED cuts off
                TestSupport.dropped,
                TestSupport.key(307, 1), TestSupport.abs(0, -30000),  // lost stretch: discarded
                TestSupport.syn,
            ], at: t)
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(frames.first?.keys, [KeyChange(code: 304, pressed: false)])
        XCTAssertEqual(frames.first?.axes.map(\.raw), [16000])
        XCTAssertEqual(assembler.keysDown, [])
        XCTAssertEqual(assembler.droppedCount, 1)
        XCTAssertFalse(assembler.isDiscarding)
        // Normal operation afterwards.
        let next = assembler.feed([TestSupport.key(307, 1), TestSupport.syn], at: t)
        XCTAssertEqual(next.first?.keys, [KeyChange(code: 307, pressed: true)])
    }

    func testSynDroppedResyncsFromAStateSourceWithOnlyTheDifferences() {
        var assembler = EvdevFrameAssembler(absInfo: xboxAxes)
        assembler.stateSource = { EvdevStateSnapshot(keysDown: [305], axisValues: [0: 16000, 1: -20000]) }
        _ = assembler.feed([TestSupport.key(304, 1), TestSupport.abs(0, 16000), TestSupport.abs(1, 0), TestSupport.syn], at: t)
        let frames = assembler.feed([TestSupport.dropped, TestSupport.abs(0, 5), TestSupport.syn], at: t)
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(frames.first?.keys, [KeyChange(code: 304, pressed: false), KeyChange(code: 305, pressed: true)])
        XCTAssertEqual(frames.first?.axes.map(\.code), [1])
        XCTAssertEqual(frames.first?.axes.map(\.raw), [-20000])
        XCTAssertEqual(assembler.keysDown, [305])
    }

    func testNormalisationOfCentredOneSidedHatAndDS4Axes() {
        let xbox = AbsInfo(minimum: -32768, maximum: 32767, flat: 128)
        XCTAssertEqual(xbox.defaultShape(forCode: 0), .centred)
        XCTAssertEqual(xbox.normalise(0, shape: .centred), 0)
        XCTAssertEqual(xbox.normalise(127, shape: .centred), 0, "inside flat is centre (the centre is -0.5)")
        XCTAssertEqual(xbox.normalise(-128, shape: .centred), 0)
        XCTAssertGreaterThan(xbox.normalise(200, shape: .centred), 0)
        XCTAssertEqual(xbox.normalise(32767, shape: .centred), 1, accuracy: 1e-9)
        XCTAssertEqual(xbox.normalise(-32768, shape: .centred), -1, accuracy: 1e-9)
        // Half-way between the flat edge and full deflection is half.
        let half = xbox.normalise(Int32((32767.5 + 128) / 2 - 0.5), shape: .centred)
        XCTAssertEqual(half, 0.5, accuracy: 1e-4)

        let trigger = AbsInfo(minimum: 0, maximum: 255)
        XCTAssertEqual(trigger.defaultShape(forCode: EvdevCode.absRZ), .oneSided)
        XCTAssertEqual(trigger.defaultShape(forCode: EvdevCode.absZ), .oneSided)
        XCTAssertEqual(trigger.normalise(0, shape: .oneSided), 0)
        XCTAssertEqual(trigger.normalise(255, shape: .oneSided), 1)
        XCTAssertEqual(trigger.normalise(51, shape: .oneSided), 0.2, accuracy: 1e-9)
        let xboxOneTrigger = AbsInfo(minimum: 0, maximum: 1023)
        XCTAssertEqual(xboxOneTrigger.normalise(1023, shape: xboxOneTrigger.defaultShape(forCode: 0x09)), 1)

        let ds4Stick = AbsInfo(minimum: 0, maximum: 255)
        XCTAssertEqual(ds4Stick.defaultShape(forCode: EvdevCode.absX), .centred)
        XCTAssertEqual(ds4Stick.defaultShape(forCode: EvdevCode.absRY), .centred)
        XCTAssertEqual(ds4Stick.normalise(0, shape: .centred), -1)
        XCTAssertEqual(ds4Stick.normalise(255, shape: .centred), 1)
        XCTAssertEqual(ds4Stick.normalise(128, shape: .centred), 0.5 / 127.5, accuracy: 1e-9)

        let hat = AbsInfo(minimum: -1, maximum: 1)
        XCTAssertEqual(hat.defaultShape(forCode: EvdevCode.absHat0X), .centred)
        XCTAssertEqual([-1, 0, 1].map { hat.normalise($0, shape: .centred) }, [-1, 0, 1])

        XCTAssertEqual(AbsInfo(minimum: 5, maximum: 5).normalise(5, shape: .centred), 0, "degenerate range")
        XCTAssertEqual(trigger.normalise(9999, shape: .oneSided), 1, "clamped")
    }

    func testFramesCarryNormalisedValuesAndShapeOverrides() {
        var assembler = EvdevFrameAssembler(absInfo: xboxAxes, axisShapes: [5: .centred])
        let frame = assembler.feed([TestSupport.abs(5, 255), TestSupport.abs(16, -1), TestSupport.syn], at: t).first
        XCTAssertEqual(frame?.axes, [AxisValue(code: 5, value: 1, raw: 255), AxisValue(code: 16, value: -1, raw: -1)])
        XCTAssertEqual(assembler.shape(ofAxis: 5), .centred)
    }

    func testAccelerometerFramesCarryMetresPerSecondSquared() {
        let axis = AbsInfo(minimum: -32768, maximum: 32767, resolution: 8192)
        var assembler = EvdevFrameAssembler(absInfo: [0: axis, 1: axis, 2: axis], isAccelerometer: true)
        let frame = assembler.feed([TestSupport.abs(1, 8192), TestSupport.abs(2, -4096), TestSupport.syn], at: t).first
        let acceleration = try? XCTUnwrap(frame?.acceleration)
        XCTAssertEqual(acceleration?.x ?? -1, 0, accuracy: 1e-9)
        XCTAssertEqual(acceleration?.y ?? 0, 9.80665, accuracy: 1e-9)
        XCTAssertEqual(acceleration?.z ?? 0, -9.80665 / 2, accuracy: 1e-9)
    }

    func testStillAccelerometerStillDeliversASamplePerReport() {
        // A sensor lying still: the kernel drops unchanged ABS values, only MSC_TIMESTAMP arrives.
        let axis = AbsInfo(minimum: -32768, maximum: 32767, resolution: 8192)
        var assembler = EvdevFrameAssembler(absInfo: [0: axis, 1: axis, 2: axis], isAccelerometer: true)
        _ = assembler.feed([TestSupport.abs(2, 8192), TestSupport.syn], at: t)
        let timestamp = InputEvent(seconds: 0, microseconds: 0, type: 4, code: 5, value: 1234)  // EV_MSC, MSC_TIMESTAMP
        let frames = assembler.feed([timestamp, TestSupport.syn, timestamp, TestSupport.syn], at: t)
        XCTAssertEqual(frames.count, 2)
        XCTAssertEqual(frames.first?.acceleration?.z ?? 0, 9.80665, accuracy: 1e-9)
        XCTAssertEqual(frames.first?.axes, [])
        // A gamepad report that changes nothing is still no frame.
        var pad = EvdevFrameAssembler(absInfo: [0: axis])
        XCTAssertEqual(pad.feed([timestamp, TestSupport.syn], at: t), [])
    }

    func testStateFrameHasEveryKnownAxisAndKeyDown() {
        let info = AbsInfo(minimum: -32768, maximum: 32767, flat: 128, value: 32767)
        let assembler = EvdevFrameAssembler(
            absInfo: [0: info, 5: AbsInfo(minimum: 0, maximum: 255, value: 0)], keysDown: [0x131, 0x130],
            knowsInitialAxisValues: true)
        let frame = assembler.stateFrame(at: t)
        XCTAssertEqual(frame.axes, [AxisValue(code: 0, value: 1, raw: 32767), AxisValue(code: 5, value: 0, raw: 0)])
        XCTAssertEqual(frame.keys, [KeyChange(code: 0x130, pressed: true), KeyChange(code: 0x131, pressed: true)])
        XCTAssertNil(frame.acceleration)
    }
}
