import DriveCore
import XCTest

@testable import DriveDashboard

final class SnapshotCoalescerTests: XCTestCase {
    let t0 = Instant(nanoseconds: 1_000_000_000_000)
    func at(_ ms: Int64) -> Instant { t0.advanced(by: .milliseconds(ms)) }
    let idle = SnapshotCoalescer.Key(engineOn: true, link: "up", speed: 40)

    func testAtMostOneSnapshotPer50Milliseconds() {
        var c = SnapshotCoalescer()
        XCTAssertEqual(c.offer(version: 1, key: idle, at: at(0)), .send)
        XCTAssertEqual(c.offer(version: 2, key: idle, at: at(10)), .wait(until: at(50)))
        XCTAssertEqual(c.offer(version: 3, key: idle, at: at(49)), .wait(until: at(50)))
        XCTAssertEqual(c.offer(version: 3, key: idle, at: at(50)), .send)
        XCTAssertEqual(c.offer(version: 3, key: idle, at: at(200)), .nothing, "the browser has it")
        XCTAssertEqual(c.offer(version: 4, key: idle, at: at(200)), .send)
    }

    func testTwentyPerSecondUnderAFlood() {
        var c = SnapshotCoalescer()
        var sent = 0
        var version: UInt64 = 0
        for ms in stride(from: Int64(0), to: 1000, by: 1) {  // a change every millisecond
            version += 1
            if c.offer(version: version, key: idle, at: at(ms)) == .send { sent += 1 }
        }
        XCTAssertEqual(sent, 20)
    }

    func testEngineLinkOrSpeedChangesGoOutAtOnce() {
        var c = SnapshotCoalescer()
        XCTAssertEqual(c.offer(version: 1, key: idle, at: at(0)), .send)
        var engineOff = idle
        engineOff.engineOn = false
        XCTAssertEqual(c.offer(version: 2, key: engineOff, at: at(1)), .send)
        var linkDown = engineOff
        linkDown.link = "down: refused"
        XCTAssertEqual(c.offer(version: 3, key: linkDown, at: at(2)), .send)
        var faster = linkDown
        faster.speed = 50
        XCTAssertEqual(c.offer(version: 4, key: faster, at: at(3)), .send)
        XCTAssertEqual(c.offer(version: 5, key: faster, at: at(4)), .wait(until: at(53)))
    }
}
