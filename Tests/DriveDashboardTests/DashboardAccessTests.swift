import DriveCore
import XCTest

@testable import DriveDashboard

final class DashboardAccessTests: XCTestCase {
    func testViewOnlyByDefault() {
        let access = DashboardAccess(controls: false, token: nil)
        XCTAssertEqual(access.grant(sessionValid: true), .viewOnly(reason: "this dashboard is view only ([dashboard] controls = false)"))
    }

    func testControlsWithoutTokenForEveryLocalBrowser() {
        XCTAssertEqual(DashboardAccess(controls: true, token: nil).grant(sessionValid: false), .control)
    }

    func testControlsWithTokenNeedTheSession() {
        let access = DashboardAccess(controls: true, token: "0123456789abcdef")
        XCTAssertEqual(access.grant(sessionValid: true), .control)
        guard case .viewOnly(let reason) = access.grant(sessionValid: false) else { return XCTFail() }
        XCTAssertTrue(reason.contains("token"))
    }

    func testViewOnlyConnectionsCannotSearchOrPick() {
        let token = DashboardAccess(controls: true, token: "0123456789abcdef")
        for grant in [token.grant(sessionValid: false), DashboardAccess(controls: false, token: nil).grant(sessionValid: true)] {
            guard case .viewOnly(let why) = grant else { return XCTFail("\(grant)") }
            for message in [ClientMessage.bluetoothScan, .bluetoothPick(address: "98:D3:31:F5:2A:11"), .control(.engine)] {
                XCTAssertEqual(DashboardAccess.admit(message, grant: grant), .refuse("refused: \(why)"), "\(message)")
            }
            XCTAssertEqual(DashboardAccess.admit(.ping, grant: grant), .drop)
        }
        let control = token.grant(sessionValid: true)
        XCTAssertEqual(DashboardAccess.admit(.bluetoothScan, grant: control), .forward)
        XCTAssertEqual(DashboardAccess.admit(.bluetoothPick(address: "98:D3:31:F5:2A:11"), grant: control), .forward)
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

    func testCookieParsing() {
        XCTAssertEqual(DashboardAccess.cookie("carbridge_session", in: "a=1; carbridge_session=xyz; b=2"), "xyz")
        XCTAssertEqual(DashboardAccess.cookie("carbridge_session", in: "carbridge_session=xyz"), "xyz")
        XCTAssertNil(DashboardAccess.cookie("carbridge_session", in: "xcarbridge_session=xyz"))
        XCTAssertNil(DashboardAccess.cookie("carbridge_session", in: nil))
        XCTAssertNil(DashboardAccess.cookie("carbridge_session", in: "carbridge_session"))
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

    func testLoginFormParsing() {
        XCTAssertEqual(DashboardServer.formValue("token", in: "token=ab%2Bc+d&x=1"), "ab+c d")
        XCTAssertNil(DashboardServer.formValue("token", in: "x=1"))
    }
}
