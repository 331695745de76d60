import DriveCore
import DriveView
import XCTest

@testable import DriveDashboard

/// The car's status on the dashboard: the state's JSON (the table with each value's age, the battery
/// warning) and `/metrics` (`carbridge_car_status{key=…}` for numeric values, `carbridge_car_low_battery`).
final class DashboardCarStatusTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 5_000_000_000)

    func testTheStateCarriesTheTableAndTheWarning() {
        var run = RunSnapshot(linkName: "sim", linkStatus: "up")
        var json = DashboardState(run: run).json(now: t0, timeText: { _ in "12:00:00.000" })
        XCTAssertFalse(json.contains("\"status\""), "nothing heard: no table")
        XCTAssertFalse(json.contains("batteryWarning"))
        run.carStatus.update(CarStatusLine("BAT=7.40;RSSI=-61")!, at: t0)
        run.carStatus.update(CarStatusLine("BAT=6.50")!, at: t0.advanced(by: .seconds(12)))
        run.batteryWarning = "car battery low: BAT=6.50 (below 6.8)"
        json = DashboardState(run: run).json(now: t0.advanced(by: .milliseconds(12_500)), timeText: { _ in "12:00:00.000" })
        XCTAssertTrue(
            json.contains(#""status":[{"key":"BAT","value":"6.50","ageMs":500},{"key":"RSSI","value":"-61","ageMs":12500}],"batteryWarning":"car battery low: BAT=6.50 (below 6.8)""#),
            json)
    }

    func testNumericValuesAreExportedByKeyAndFollowTheTable() {
        let metrics = DashboardMetrics()
        XCTAssertTrue(metrics.render().contains("\ncarbridge_car_low_battery 0.0\n"), metrics.render())
        XCTAssertFalse(metrics.render().contains("carbridge_car_status"))
        var table = CarStatusTable(limit: 3)
        table.update(CarStatusLine("BAT=7.42;RSSI=-60;MODE=auto")!, at: t0)
        metrics.carStatus(table)
        var text = metrics.render()
        XCTAssertTrue(text.contains("\ncarbridge_car_status{key=\"BAT\"} 7.42\n"), text)
        XCTAssertTrue(text.contains("\ncarbridge_car_status{key=\"RSSI\"} -60"), text)
        XCTAssertFalse(text.contains("MODE"), "text values are not exported")
        XCTAssertTrue(text.contains("# HELP carbridge_car_status "), text)
        table.update(CarStatusLine("T1=20;RSSI=weak")!, at: t0.advanced(by: .seconds(1)))
        metrics.carStatus(table)
        text = metrics.render()
        XCTAssertFalse(text.contains("key=\"BAT\""), "pushed out of the table: gone from /metrics\n\(text)")
        XCTAssertFalse(text.contains("key=\"RSSI\""), "no longer a number: gone\n\(text)")
        XCTAssertTrue(text.contains("\ncarbridge_car_status{key=\"T1\"} 20"), text)
        metrics.carLowBattery.record(1)
        XCTAssertTrue(metrics.render().contains("\ncarbridge_car_low_battery 1.0\n"), metrics.render())
    }
}
