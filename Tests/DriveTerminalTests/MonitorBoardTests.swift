import DriveCore
import DriveInput
import DriveMapping
import DriveTerminal
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
