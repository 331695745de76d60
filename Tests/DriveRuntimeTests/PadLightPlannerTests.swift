import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveRuntime
import XCTest

/// The pads' light: each state's colour and the priority order; a pad's battery alarm with its hysteresis.
final class PadLightPlannerTests: XCTestCase {
    private func state(engine: Bool, speed: Int = 0) -> DriveState {
        DriveState(engineOn: engine, speed: speed)
    }

    func testEachStateAndItsDefaultColour() throws {
        let feedback = try CarbridgeConfig.defaults(resolver: EventCodeNames()).feedback
        var planner = PadLightPlanner()
        XCTAssertEqual(planner.state(batteryLow: false), .linkDown, "before the link was ever up")
        XCTAssertTrue(planner.handle(.link(up: true)))
        XCTAssertEqual(planner.state(batteryLow: false), .engineOff)
        XCTAssertTrue(planner.handle(.state(state(engine: true))))
        XCTAssertEqual(planner.state(batteryLow: false), .stopped)
        XCTAssertTrue(planner.handle(.state(state(engine: true, speed: 10))))
        XCTAssertEqual(planner.state(batteryLow: false), .driving)
        XCTAssertFalse(planner.handle(.state(state(engine: true, speed: 60))), "a faster speed shows the same")
        XCTAssertFalse(planner.handle(.applied(.steer(30))))
        XCTAssertTrue(planner.handle(.applied(.inputLost)))
        XCTAssertEqual(planner.state(batteryLow: false), .inputRefused)
        XCTAssertTrue(planner.handle(.applied(.inputRestored)))
        XCTAssertEqual(planner.state(batteryLow: false), .driving)
        XCTAssertEqual(
            PadLightState.allCases.map { $0.colour(in: feedback).description },
            ["#ff0000", "#ff00ff", "#ff6000", "#00ff00", "#006060", "#303030"],
            "link down red, input refused magenta, battery low amber, driving green, stopped dim cyan, engine off dim white")
    }

    func testThePriorityOrder() {
        var planner = PadLightPlanner()
        planner.handle(.state(state(engine: true, speed: 50)))
        planner.handle(.applied(.inputLost))
        XCTAssertEqual(planner.state(batteryLow: true), .linkDown, "link down beats everything")
        planner.handle(.link(up: true))
        XCTAssertEqual(planner.state(batteryLow: true), .inputRefused, "then refused input")
        planner.handle(.applied(.inputRestored))
        XCTAssertEqual(planner.state(batteryLow: true), .batteryLow, "then the pad's battery")
        XCTAssertEqual(planner.state(batteryLow: false), .driving, "then what the car does")
        planner.handle(.link(up: false))
        XCTAssertEqual(planner.state(batteryLow: true), .linkDown)
    }

    func testTheBatteryWarnsOnceAPerCrossingAndNotWhileCharging() {
        var alarm = PadBatteryAlarm(threshold: 20)
        XCTAssertNil(alarm.observe(level: 21, charging: false))
        XCTAssertEqual(alarm.observe(level: 20, charging: false), .low, "at the threshold")
        XCTAssertTrue(alarm.isLow)
        XCTAssertNil(alarm.observe(level: 19, charging: false), "not repeated")
        XCTAssertNil(alarm.observe(level: 25, charging: false), "within the margin: still low")
        XCTAssertEqual(alarm.observe(level: 26, charging: false), .cleared, "above threshold + 5")
        XCTAssertNil(alarm.observe(level: 22, charging: false))
        XCTAssertEqual(alarm.observe(level: 20, charging: false), .low, "again after the recovery")
        XCTAssertEqual(alarm.observe(level: 18, charging: true), .cleared, "charging clears it")
        XCTAssertNil(alarm.observe(level: 18, charging: false), "off the cable again at 18 %: not re-armed yet")
        XCTAssertNil(alarm.observe(level: 30, charging: true))
        XCTAssertEqual(alarm.observe(level: 15, charging: false), .low)

        var charging = PadBatteryAlarm(threshold: 20)
        XCTAssertNil(charging.observe(level: 5, charging: true), "never while charging")
        XCTAssertEqual(charging.observe(level: 5, charging: false), .low)
        var off = PadBatteryAlarm(threshold: 0)
        XCTAssertNil(off.observe(level: 0, charging: false), "0: never")
    }
}
