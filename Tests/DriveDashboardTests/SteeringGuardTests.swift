import DriveCore
import XCTest

@testable import DriveDashboard

final class SteeringGuardTests: XCTestCase {
    let t0 = Instant(nanoseconds: 1_000_000_000_000)
    func at(_ ms: Int64) -> Instant { t0.advanced(by: .milliseconds(ms)) }

    func testASilentSteeringTabIsLostInputAtExactlyTheTimeout() {
        var g = SteeringGuard(timeout: .seconds(1))
        XCTAssertEqual(g.received(.control(.steer(30)), from: 1, at: at(0)), [.steer(30)])
        XCTAssertEqual(g.nextDeadline, at(1000))
        XCTAssertEqual(g.received(.ping, from: 1, at: at(250)), [])
        XCTAssertEqual(g.nextDeadline, at(1250), "a ping keeps it alive")
        XCTAssertEqual(g.tick(at: at(1249)), [])
        XCTAssertEqual(g.tick(at: at(1250)), [.inputLost])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.tick(at: at(5000)), [], "reported once")
        // The tab (or another) steers again: the input is back first.
        XCTAssertEqual(g.received(.control(.steer(10)), from: 1, at: at(6000)), [.inputRestored, .steer(10)])
        XCTAssertEqual(g.received(.control(.steer(12)), from: 1, at: at(6010)), [.steer(12)])
    }

    func testADisconnectWhileSteeringIsLostInput() {
        var g = SteeringGuard()
        _ = g.received(.control(.steer(-40)), from: 7, at: at(0))
        XCTAssertEqual(g.disconnected(7, at: at(100)), [.inputLost])
        XCTAssertFalse(g.hasSteeringClient)
        XCTAssertEqual(g.disconnected(7, at: at(200)), [])
    }

    func testButtonsAloneDoNotMakeATabAnInput() {
        var g = SteeringGuard()
        XCTAssertEqual(g.received(.control(.engine), from: 2, at: at(0)), [.engine])
        XCTAssertEqual(g.received(.control(.speedUp), from: 2, at: at(1)), [.speedUp])
        XCTAssertEqual(g.received(.ping, from: 2, at: at(2)), [])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.tick(at: at(10_000)), [])
        XCTAssertEqual(g.disconnected(2, at: at(10_001)), [], "it was not steering")
    }

    func testOnlySteeringTabsAreTimed() {
        var g = SteeringGuard(timeout: .milliseconds(500))
        _ = g.received(.control(.steer(5)), from: 1, at: at(0))
        _ = g.received(.control(.gear), from: 2, at: at(0))
        XCTAssertEqual(g.received(.ping, from: 2, at: at(400)), [])
        XCTAssertEqual(g.tick(at: at(500)), [.inputLost], "tab 2's pings do not keep tab 1 alive")
    }

    func testRateLimit() {
        var limit = MessageRateLimit(perSecond: 10, burst: 5)
        var allowed = 0
        for _ in 0..<20 where limit.allow(at: at(0)) { allowed += 1 }
        XCTAssertEqual(allowed, 5)
        XCTAssertFalse(limit.allow(at: at(50)))
        XCTAssertTrue(limit.allow(at: at(100)), "one token back after 100 ms")
        XCTAssertFalse(limit.allow(at: at(100)))
    }
}
