import DriveCore
import DriveMapping
import XCTest

/// Arming and the dead-man without hands, at exact instants: held still for arm_after arms, a wobble
/// restarts the count, stepping off stops at once and turns the engine off engine_off_after later.
final class HandsFreeArmingTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)
    private func at(_ milliseconds: Int64) -> Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    func testHeldStillForTwoSecondsArms() {
        var arming = HandsFreeArming(settings: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5)))
        XCTAssertEqual(arming.update(present: true, still: true, at: at(0)), [])
        XCTAssertEqual(arming.state, .settling(since: at(0)))
        XCTAssertEqual(arming.nextDeadline, at(2000))
        XCTAssertEqual(arming.tick(at: at(1999)), [], "not before 2 s")
        XCTAssertEqual(arming.update(present: true, still: true, at: at(1999)), [])
        XCTAssertFalse(arming.isArmed)
        XCTAssertEqual(arming.tick(at: at(2000)), [.arm], "exactly at 2 s")
        XCTAssertTrue(arming.isArmed)
        XCTAssertNil(arming.nextDeadline)
        XCTAssertEqual(arming.update(present: true, still: false, at: at(2100)), [], "armed: leaning is driving")
        XCTAssertTrue(arming.isArmed)
    }

    func testAWobbleRestartsTheCount() {
        var arming = HandsFreeArming()
        _ = arming.update(present: true, still: true, at: at(0))
        XCTAssertEqual(arming.update(present: true, still: false, at: at(1500)), [], "a wobble")
        XCTAssertEqual(arming.state, .unsettled)
        XCTAssertNil(arming.nextDeadline)
        XCTAssertEqual(arming.tick(at: at(2000)), [], "the first count is gone")
        _ = arming.update(present: true, still: true, at: at(1600))
        XCTAssertEqual(arming.nextDeadline, at(3600))
        XCTAssertEqual(arming.tick(at: at(3599)), [])
        XCTAssertEqual(arming.tick(at: at(3600)), [.arm])
    }

    func testALateSampleArmsAtOnceWithoutATick() {
        var arming = HandsFreeArming()
        _ = arming.update(present: true, still: true, at: at(0))
        XCTAssertEqual(arming.update(present: true, still: true, at: at(2500)), [.arm])
    }

    func testSteppingOffStopsAtOnceAndTheEngineGoesOffLater() {
        var arming = HandsFreeArming(settings: .init(armAfter: .seconds(2), engineOffAfter: .seconds(5)))
        _ = arming.update(present: true, still: true, at: at(0))
        XCTAssertEqual(arming.tick(at: at(2000)), [.arm])
        XCTAssertEqual(arming.update(present: false, still: false, at: at(7000)), [.stop], "the dead-man: at once")
        XCTAssertEqual(arming.state, .leaving(since: at(7000)))
        XCTAssertEqual(arming.nextDeadline, at(12_000))
        XCTAssertEqual(arming.tick(at: at(11_999)), [])
        XCTAssertEqual(arming.tick(at: at(12_000)), [.engineOff])
        XCTAssertEqual(arming.state, .absent)
    }

    func testSteppingBackOnMustSettleAgain() {
        var arming = HandsFreeArming()
        _ = arming.update(present: true, still: true, at: at(0))
        _ = arming.tick(at: at(2000))
        XCTAssertEqual(arming.update(present: false, still: false, at: at(3000)), [.stop])
        XCTAssertEqual(arming.update(present: true, still: true, at: at(3500)), [])
        XCTAssertFalse(arming.isArmed, "a new rider is not armed on stepping on")
        XCTAssertEqual(arming.tick(at: at(5500)), [.arm])
    }

    func testNobodyNeverArms() {
        var arming = HandsFreeArming()
        XCTAssertEqual(arming.update(present: false, still: true, at: at(0)), [])
        XCTAssertEqual(arming.update(present: false, still: true, at: at(10_000)), [])
        XCTAssertNil(arming.nextDeadline)
        _ = arming.update(present: true, still: true, at: at(10_000))
        XCTAssertEqual(arming.update(present: false, still: true, at: at(11_000)), [], "gone before arming: nothing to stop")
        XCTAssertEqual(arming.tick(at: at(12_000)), [])
    }
}

/// Presence with hysteresis at the threshold.
final class WeightPresenceTests: XCTestCase {
    func testHysteresisAtTheThreshold() {
        var presence = WeightPresence(minimumKilograms: 20, hysteresisKilograms: 5)
        XCTAssertFalse(presence.update(kilograms: 19.99))
        XCTAssertTrue(presence.update(kilograms: 20), "from the minimum up")
        XCTAssertTrue(presence.update(kilograms: 15.01), "a light rider dipping below the minimum stays")
        XCTAssertTrue(presence.update(kilograms: 15), "only below minimum − hysteresis is gone")
        XCTAssertFalse(presence.update(kilograms: 14.99))
        XCTAssertFalse(presence.update(kilograms: 19.9), "back on only from the minimum")
        XCTAssertTrue(presence.update(kilograms: 20.5))
        XCTAssertFalse(presence.update(kilograms: .nan), "a broken reading is nobody")
    }
}
