import DriveCore
import DriveRuntime
import DriveView
import XCTest

@testable import DriveDashboard

/// A pad's low battery on the dashboard: the view model's warnings in the state's JSON, and the page's line for them.
final class DashboardPadBatteryTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 5_000_000_000)

    func testTheWarningGoesFromTheEventToTheStatesJSON() {
        let model = RunViewModel(linkName: "sim", linkStatus: "up")
        var json = DashboardState(run: model.snapshot).json(now: t0, timeText: { _ in "12:00:00.000" })
        XCTAssertFalse(json.contains("padBatteryWarnings"), "no warning: no field")
        let version = model.version
        model.receive(.padBattery(PadBatteryChange(key: "/sys/pad", name: "gamepad \"DualSense\"", level: 15, charging: false, isLow: true)))
        XCTAssertNotEqual(model.version, version, "the dashboard publishes when the version moved")
        json = DashboardState(run: model.snapshot).json(now: t0, timeText: { _ in "12:00:00.000" })
        XCTAssertTrue(json.contains(#""padBatteryWarnings":["pad battery low: gamepad \"DualSense\" at 15 %"]"#), json)
        model.receive(.padBattery(PadBatteryChange(key: "/sys/pad", name: "gamepad \"DualSense\"", level: 15, charging: true, isLow: false)))
        json = DashboardState(run: model.snapshot).json(now: t0, timeText: { _ in "12:00:00.000" })
        XCTAssertFalse(json.contains("padBatteryWarnings"), json)
    }

    func testThePageShowsTheWarnings() {
        let page = DashboardPage.html
        XCTAssertTrue(page.contains(#"<div id="pad-battery-warning" class="hidden" role="status"></div>"#))
        XCTAssertTrue(page.contains("s.padBatteryWarnings || []"))
    }
}
