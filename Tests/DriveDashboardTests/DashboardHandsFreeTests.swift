import DriveCore
import DriveView
import XCTest

@testable import DriveDashboard

/// The hands-free rider in the dashboard's state: arming, the board's weight and centre of pressure
/// (the dot in the square), a tilt throttle's pitch; absent when nothing is hands-free.
final class DashboardHandsFreeTests: XCTestCase {
    private let t = Instant(nanoseconds: 5_000_000_000)

    private func json(_ handsFree: HandsFreeReading?) -> String {
        let run = RunSnapshot(linkName: "sim", linkStatus: "up", handsFree: handsFree)
        return DashboardState(run: run).json(now: t, timeText: { _ in "12:00:00.000" })
    }

    func testBoardRider() {
        let reading = HandsFreeReading(arming: .armed, weightKilograms: 60.26, centreX: -0.304, centreY: 0.2987)
        XCTAssertTrue(json(reading).contains(#""handsFree":{"arming":"armed","weight":60.5,"copX":-0.3,"copY":0.3}"#),
                      json(reading))
    }

    func testTiltRider() {
        let reading = HandsFreeReading(arming: .off, pitchDegrees: 14.8)
        XCTAssertTrue(json(reading).contains(#""handsFree":{"arming":"off","pitch":15.0}"#), json(reading))
    }

    func testNothingHandsFreeSendsNothing() {
        XCTAssertFalse(json(nil).contains("handsFree"))
    }

    func testNoiseIsNoChange() {
        XCTAssertEqual(HandsFreeReading(arming: .armed, weightKilograms: 60.1, centreX: 0.101, centreY: 0),
                       HandsFreeReading(arming: .armed, weightKilograms: 59.9, centreX: 0.099, centreY: 0.004),
                       "rounded when made: a still rider redraws nothing")
    }
}
