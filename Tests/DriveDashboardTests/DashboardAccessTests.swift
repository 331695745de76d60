import DriveCore
import DriveWebProtocol
import XCTest

@testable import DriveDashboard

final class DashboardAccessTests: XCTestCase {
    func testViewOnlyByDefault() {
        let access = DashboardAccess(controls: false, token: nil)
        for role in [DashboardAccess.Role.operator, .driver, nil] {
            XCTAssertEqual(access.grant(role: role), .viewOnly(reason: "this dashboard is view only ([dashboard] controls = false)"))
        }
    }

    func testControlsWithoutTokenForEveryLocalBrowser() {
        XCTAssertEqual(DashboardAccess(controls: true, token: nil).grant(role: nil), .control)
        XCTAssertEqual(DashboardAccess(controls: true, token: nil).grant(role: .driver), .driver, "a joined phone drives only, token or not")
    }

    func testControlsWithTokenNeedTheSession() {
        let access = DashboardAccess(controls: true, token: "0123456789abcdef")
        XCTAssertEqual(access.grant(role: .operator), .control)
        XCTAssertEqual(access.grant(role: .driver), .driver)
        guard case .viewOnly(let reason) = access.grant(role: nil) else { return XCTFail() }
        XCTAssertTrue(reason.contains("token") && reason.contains("join code"), reason)
    }

    func testViewOnlyConnectionsCannotSearchOrPick() {
        let token = DashboardAccess(controls: true, token: "0123456789abcdef")
        for grant in [token.grant(role: nil), DashboardAccess(controls: false, token: nil).grant(role: .operator)] {
            guard case .viewOnly(let why) = grant else { return XCTFail("\(grant)") }
            for message in [ClientMessage.bluetoothScan, .bluetoothPick(address: "98:D3:31:F5:2A:11"), .control(.engine)] {
                XCTAssertEqual(DashboardAccess.admit(message, grant: grant), .refuse("refused: \(why)"), "\(message)")
            }
            XCTAssertEqual(DashboardAccess.admit(.ping, grant: grant), .drop)
        }
        let control = token.grant(role: .operator)
        XCTAssertEqual(DashboardAccess.admit(.bluetoothScan, grant: control), .forward)
        XCTAssertEqual(DashboardAccess.admit(.bluetoothPick(address: "98:D3:31:F5:2A:11"), grant: control), .forward)
    }

    func testADriverDrivesAndWatchesOnly() {
        let driver = DashboardAccess(controls: true, token: "0123456789abcdef").grant(role: .driver)
        XCTAssertEqual(driver.roleName, "driver")
        XCTAssertTrue(driver.drives)
        let drive: [ClientMessage] = [
            .control(.engine), .control(.speedUp), .control(.speedDown), .control(.gear), .control(.function(3)), .control(.steer(12)),
            .tilt(PhoneTiltReading(beta: 0, gamma: 3, hold: .flat, sequence: 4)), .stick(PhoneStickReading(x: 0, y: 1, form: .polar)),
            .straight, .release, .ping,
        ]
        for message in drive { XCTAssertEqual(DashboardAccess.admit(message, grant: driver), .forward, "\(message)") }
        guard case .refuse(let scan) = DashboardAccess.admit(.bluetoothScan, grant: driver),
            case .refuse(let pick) = DashboardAccess.admit(.bluetoothPick(address: "98:D3:31:F5:2A:11"), grant: driver)
        else { return XCTFail("a driver's operator messages must be refused") }
        XCTAssertTrue(scan.contains("searching for cars is the operator's"), scan)
        XCTAssertTrue(pick.contains("config file") && pick.contains("operator's"), pick)
        XCTAssertEqual(DashboardAccess.Grant.viewOnly(reason: "x").roleName, "viewer")
        XCTAssertFalse(DashboardAccess.Grant.viewOnly(reason: "x").drives)
    }

    func testSessionsRememberTheirRole() {
        let store = SessionStore(limit: 4)
        let op = store.create(role: .operator)
        let driver = store.create(role: .driver)
        XCTAssertEqual(store.role(of: op), .operator)
        XCTAssertEqual(store.role(of: driver), .driver)
        XCTAssertNil(store.role(of: "0123456789abcdef0123456789abcdef"))
        store.revoke([driver])
        XCTAssertNil(store.role(of: driver))
        XCTAssertEqual(store.role(of: op), .operator)
    }

    func testTokenComparison() {
        let access = DashboardAccess(controls: true, token: "0123456789abcdef")
        XCTAssertTrue(access.tokenMatches("0123456789abcdef"))
        XCTAssertFalse(access.tokenMatches("0123456789abcdeF"))
        XCTAssertFalse(access.tokenMatches("0123456789abcde"))
        XCTAssertFalse(access.tokenMatches("0123456789abcdef0"))
        XCTAssertFalse(access.tokenMatches(""))
        XCTAssertFalse(DashboardAccess(controls: true, token: nil).tokenMatches(""))
    }

    func testCookieIsHttpOnlyAndSameSiteStrict() {
        let header = DashboardAccess.setCookie(session: "abc")
        XCTAssertEqual(header, "carbridge_session=abc; Path=/; HttpOnly; SameSite=Strict")
    }

    func testOriginChecks() {
        XCTAssertTrue(DashboardAccess.originAllowed(origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080", scheme: "http"))
        XCTAssertTrue(DashboardAccess.originAllowed(origin: "http://KIOSK.local:8080", host: "kiosk.local:8080", scheme: "http"))
        XCTAssertTrue(DashboardAccess.originAllowed(origin: nil, host: "127.0.0.1:8080", scheme: "http"), "no Origin: not a browser")
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "http://evil.example", host: "127.0.0.1:8080", scheme: "http"))
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "http://127.0.0.1:9999", host: "127.0.0.1:8080", scheme: "http"))
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "http://127.0.0.1:8080.evil.example", host: "127.0.0.1:8080", scheme: "http"))
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "null", host: "127.0.0.1:8080", scheme: "http"))
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "http://127.0.0.1:8080", host: nil, scheme: "http"))
    }

    /// An HTTPS dashboard is reached from its https:// page only, and an HTTP one from its http:// page only.
    func testOriginSchemeIsExact() {
        XCTAssertTrue(DashboardAccess.originAllowed(origin: "https://192.168.1.5:8443", host: "192.168.1.5:8443", scheme: "https"))
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "http://192.168.1.5:8443", host: "192.168.1.5:8443", scheme: "https"))
        XCTAssertFalse(DashboardAccess.originAllowed(origin: "https://127.0.0.1:8080", host: "127.0.0.1:8080", scheme: "http"))
    }

    func testCookieIsSecureOverHTTPS() {
        XCTAssertEqual(DashboardAccess.setCookie(session: "abc", secure: true), "carbridge_session=abc; Path=/; HttpOnly; SameSite=Strict; Secure")
    }

    func testSessions() {
        let store = SessionStore(limit: 2)
        let a = store.create()
        let b = store.create()
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(store.isValid(a))
        XCTAssertFalse(store.isValid("0123456789abcdef0123456789abcdef"))
        XCTAssertFalse(store.isValid(nil))
        _ = store.create()
        XCTAssertFalse(store.isValid(a), "the oldest session goes at the limit")
        XCTAssertTrue(store.isValid(b))
    }
}
