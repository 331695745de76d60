import DriveInputModel
import DriveMapping
import XCTest

/// The four cells as hid-wiimote reports them (10 g units on ABS_HAT0X…ABS_HAT1Y) → weight and centre of pressure.
final class BalanceBoardReadingTests: XCTestCase {
    private func axes(tr: Int32, br: Int32, tl: Int32, bl: Int32) -> [AxisValue] {
        [AxisValue(code: 16, value: 0, raw: tr), AxisValue(code: 17, value: 0, raw: br),
         AxisValue(code: 18, value: 0, raw: tl), AxisValue(code: 19, value: 0, raw: bl)]
    }

    func testWeightAndCentreOfPressure() {
        var board = BalanceBoardReading()
        XCTAssertTrue(board.apply(axes(tr: 1700, br: 1700, tl: 1700, bl: 1700)))
        XCTAssertEqual(board.weight, 68, accuracy: 1e-9, "17 kg per cell reads 1700")
        XCTAssertEqual(board.centreOfPressure.x, 0, accuracy: 1e-9)
        XCTAssertEqual(board.centreOfPressure.y, 0, accuracy: 1e-9)
        board.apply(axes(tr: 3000, br: 1000, tl: 1000, bl: 0))
        XCTAssertEqual(board.weight, 50, accuracy: 1e-9)
        XCTAssertEqual(board.centreOfPressure.x, 0.6, accuracy: 1e-9, "right: (30 + 10 − 10 − 0) / 50")
        XCTAssertEqual(board.centreOfPressure.y, 0.6, accuracy: 1e-9, "front: (30 + 10 − 10 − 0) / 50")
    }

    func testOnlyChangedCellsArriveAndOtherAxesAreIgnored() {
        var board = BalanceBoardReading()
        board.apply(axes(tr: 1000, br: 1000, tl: 1000, bl: 1000))
        XCTAssertTrue(board.apply([AxisValue(code: 18, value: 0, raw: 3000)]))
        XCTAssertEqual(board.weight, 60, accuracy: 1e-9, "the other three keep their value")
        XCTAssertFalse(board.apply([AxisValue(code: 0, value: 0, raw: 5)]), "ABS_X is no cell")
    }

    func testEmptyBoardHasItsCentreInTheMiddle() {
        var board = BalanceBoardReading()
        board.apply(axes(tr: 50, br: 0, tl: 0, bl: 0))
        XCTAssertEqual(board.centreOfPressure.x, 0, "0.5 kg is noise, not a lean")
        XCTAssertEqual(board.centreOfPressure.y, 0)
        board.apply(axes(tr: -5, br: 0, tl: 0, bl: 0))
        XCTAssertEqual(board.weight, 0, "a negative reading counts as nothing")
    }
}
