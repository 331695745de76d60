import DriveConfig
import XCTest

@testable import DriveDashboard

/// The one-time join codes and the sessions a join makes.
final class JoinCodesTests: XCTestCase {
    func testACodeWorksOnceAndTheNextOneDiffers() {
        let joins = JoinCodes()
        let first = joins.current
        XCTAssertEqual(first.code.utf8.count, 16, "96 bits of base64url")
        XCTAssertTrue(first.code.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (48...57).contains($0)
            || (65...90).contains($0) || (97...122).contains($0) }, first.code)
        XCTAssertTrue(joins.redeem(first.code))
        XCTAssertFalse(joins.redeem(first.code), "spent")
        let second = joins.current
        XCTAssertNotEqual(second.code, first.code)
        XCTAssertNotEqual(second.generation, first.generation)
        XCTAssertFalse(joins.redeem(""))
        XCTAssertFalse(joins.redeem(second.code + "x"))
        XCTAssertFalse(joins.redeem(String(second.code.dropLast())))
        XCTAssertEqual(joins.current.code, second.code, "a wrong code does not spend the current one")
        XCTAssertTrue(joins.redeem(second.code))
    }

    func testEndingATurnHandsBackTheJoinedSessionsAndReplacesTheCode() {
        let joins = JoinCodes()
        XCTAssertEqual(joins.endTurn(), [], "nobody joined")
        joins.joined(session: "a")
        joins.joined(session: "b")
        let before = joins.current
        XCTAssertEqual(joins.endTurn(), ["a", "b"])
        XCTAssertNotEqual(joins.current.code, before.code, "the code of the last turn is no longer valid")
        XCTAssertFalse(joins.redeem(before.code))
        XCTAssertEqual(joins.endTurn(), [], "forgotten once handed back")
    }

    func testJoinedSessionsAreBoundedLikeTheSessionStore() {
        let joins = JoinCodes(sessionLimit: 3)
        for id in ["a", "b", "c", "d", "e"] { joins.joined(session: id) }
        XCTAssertEqual(joins.sessions, ["c", "d", "e"], "the oldest go first")
    }

    func testRevokedSessionsNoLongerGrantControls() {
        let sessions = SessionStore()
        let kept = sessions.create()
        let revoked = sessions.create()
        sessions.revoke([revoked])
        XCTAssertTrue(sessions.isValid(kept))
        XCTAssertFalse(sessions.isValid(revoked))
    }

    func testRandomCodesDiffer() {
        var seen = Set<String>()
        for _ in 0..<1000 { seen.insert(JoinCodes.randomCode()) }
        XCTAssertEqual(seen.count, 1000)
    }

    func testTheJoinAddress() {
        var settings = CarbridgeConfigDashboardForTests.make(listen: "0.0.0.0:8080")
        XCTAssertEqual(try JoinAddress.base(settings: settings, port: 8080, externalIPv4: { "192.168.1.10" }).get(), "http://192.168.1.10:8080")
        XCTAssertThrowsError(try JoinAddress.base(settings: settings, port: 8080, externalIPv4: { nil }).get()) { error in
            XCTAssertTrue("\(error)".contains("[dashboard] url"), "\(error)")
        }
        settings = CarbridgeConfigDashboardForTests.make(listen: "192.168.7.2:0")
        XCTAssertEqual(try JoinAddress.base(settings: settings, port: 4321, externalIPv4: { "10.0.0.1" }).get(), "http://192.168.7.2:4321")
        settings.url = "https://kiosk.local:8443"
        XCTAssertEqual(try JoinAddress.base(settings: settings, port: 4321).get(), "https://kiosk.local:8443")
    }
}

/// `[dashboard]` settings for a test.
enum CarbridgeConfigDashboardForTests {
    static func make(listen: String) -> CarbridgeConfig.Dashboard {
        var settings = CarbridgeConfig.Dashboard()
        settings.listen = try? ListenAddress(parsing: listen)
        settings.controls = true
        settings.token = "0123456789abcdef"
        return settings
    }
}
