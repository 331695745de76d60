import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveTerminal
import DriveView
import XCTest

/// `carbridge monitor` on a balance board: the four cells, the weight and the centre of pressure.
final class MonitorBoardTests: XCTestCase {
    func testBoardFrameShowsCellsWeightAndCentreOfPressure() {
        var formatter = MonitorFormatter(hysteresisDegrees: 2, resolver: EventCodeNames())
        let time = Instant(nanoseconds: 0)
        let lean = InputFrame(time: time, axes: [
            AxisValue(code: 16, value: 0, raw: 1950), AxisValue(code: 17, value: 0, raw: 1050),
            AxisValue(code: 18, value: 0, raw: 1950), AxisValue(code: 19, value: 0, raw: 1050),
        ])
        XCTAssertEqual(formatter.describeBoard(lean),
                       "cells TR 19.50 BR 10.50 TL 19.50 BL 10.50 kg, weight 60.00 kg, CoP x +0.00 y +0.30")
        let left = InputFrame(time: time, axes: [AxisValue(code: 16, value: 0, raw: 0), AxisValue(code: 17, value: 0, raw: 0)],
                              keys: [KeyChange(code: 304, pressed: true)])
        XCTAssertEqual(formatter.describeBoard(left),
                       "cells TR 0.00 BR 0.00 TL 19.50 BL 10.50 kg, weight 30.00 kg, CoP x -1.00 y +0.30, BTN_SOUTH down",
                       "only the changed cells arrive; the board's button (BTN_A = BTN_SOUTH) is shown too")
        XCTAssertEqual(formatter.describeBoard(InputFrame(time: time, keys: [KeyChange(code: 304, pressed: false)])),
                       "BTN_SOUTH up", "a frame without cells is described as any frame")
    }
}

/// The run view's rider line.
final class RunViewRiderTests: XCTestCase {
    func testRiderLineShowsWhatIsKnown() {
        var snapshot = RunSnapshot(linkName: "sim", linkStatus: "up")
        XCTAssertFalse(RunView.render(snapshot).contains("Rider"), "nothing hands-free: no line")
        snapshot.handsFree = HandsFreeReading(arming: .armed, weightKilograms: 60, centreX: -0.3, centreY: 0.3)
        XCTAssertTrue(RunView.render(snapshot).contains("Rider armed   60.0 kg   CoP x -0.3 y +0.3\r\n"), RunView.render(snapshot))
        snapshot.handsFree = HandsFreeReading(arming: .settling, pitchDegrees: 12.4)
        XCTAssertTrue(RunView.render(snapshot).contains("Rider settling   pitch +12.5°\r\n"), RunView.render(snapshot))
    }
}
