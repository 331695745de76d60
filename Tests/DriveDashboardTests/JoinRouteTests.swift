import DriveConfig
import DriveCore
import DriveLink
import DriveRuntime
import DriveSystem
import DriveWebProtocol
import Glibc
import Logging
import XCTest

@testable import DriveDashboard

/// `GET /join?code=…` on a real server (127.0.0.1, a free port), and the loop side of `join = "per-turn"`.
final class JoinRouteTests: XCTestCase {
    private func get(_ path: String, port: Int) throws -> String { LoopbackClient.get(path, port: port) }

    func testAJoinCodeLogsInOncePerCode() throws {
        let sessions = SessionStore()
        let joins = JoinCodes()
        let metrics = DashboardMetrics()
        let spent = SpentCount()
        let hub = DashboardHub { _, event in
            if case .joinCodeSpent = event { spent.lock.withLock { spent.count += 1 } }
        }
        let server = DashboardServer(
            access: DashboardAccess(controls: true, token: "0123456789abcdef"), sessions: sessions, hub: hub, metrics: metrics,
            joins: joins)
        let port = try server.start(address: ListenAddress(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let code = joins.current.code

        let first = try get("/join?code=\(code)", port: port)
        XCTAssertTrue(first.hasPrefix("HTTP/1.1 303"), first)
        XCTAssertTrue(first.lowercased().contains("location: /drive\r\n"), "to the driver's page: \(first)")
        let cookieLine = first.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }
        let cookie = try XCTUnwrap(cookieLine.map(String.init))
        XCTAssertTrue(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), cookie)
        XCTAssertFalse(cookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
        let session = CookieHeader.value(of: DashboardAccess.cookieName, in: String(cookie.dropFirst("set-cookie: ".count)))
        XCTAssertEqual(sessions.role(of: session), .driver, "the cookie is a driver's session: drive and watch only")
        XCTAssertEqual(joins.sessions, [session!], "remembered as a join's")
        XCTAssertEqual(spent.lock.withLock { spent.count }, 1, "the loop is told to show the next code")

        let again = try get("/join?code=\(code)", port: port)
        XCTAssertTrue(again.hasPrefix("HTTP/1.1 403"), again)
        XCTAssertTrue(again.contains("this join code was already used"), again)
        XCTAssertFalse(again.lowercased().contains("set-cookie"), again)
        XCTAssertNotEqual(joins.current.code, code)

        XCTAssertTrue(try get("/join?code=nonsense", port: port).hasPrefix("HTTP/1.1 403"))
        XCTAssertTrue(try get("/join", port: port).hasPrefix("HTTP/1.1 403"))
        let text = metrics.render()
        XCTAssertTrue(text.contains("carbridge_dashboard_joins_total 1"), text)
        XCTAssertTrue(text.contains("carbridge_dashboard_join_refused_total 3"), text)
    }

    func testOnlyLoopbackPeersCountAsTheKiosksOwnScreen() {
        XCTAssertTrue(DashboardServer.isLoopback("127.0.0.1"))
        XCTAssertTrue(DashboardServer.isLoopback("127.3.0.1"))
        XCTAssertTrue(DashboardServer.isLoopback("::1"))
        XCTAssertTrue(DashboardServer.isLoopback("::ffff:127.0.0.1"))
        XCTAssertFalse(DashboardServer.isLoopback("192.168.1.20"))
        XCTAssertFalse(DashboardServer.isLoopback("::ffff:192.168.1.20"))
        XCTAssertFalse(DashboardServer.isLoopback("fe80::1"))
        XCTAssertFalse(DashboardServer.isLoopback(nil), "a peer without an address (a Unix socket) is not trusted")
    }

    func testJoiningIsRefusedWhenOff() throws {
        let server = DashboardServer(
            access: DashboardAccess(controls: true, token: "0123456789abcdef"), hub: DashboardHub { _, _ in }, metrics: DashboardMetrics())
        let port = try server.start(address: ListenAddress(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let response = try get("/join?code=AAAAAAAAAAAAAAAA", port: port)
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 404"), response)
        XCTAssertTrue(response.contains("[dashboard] join"), response)
    }

    func testPerTurnTheJoinedPhoneLosesControlWhenItsTurnEnds() throws {
        let loop = try EventLoop(clock: .manual)
        let link = TestLink(loop: loop)
        let bridge = Bridge(
            settings: DriveSettings(), link: link, loop: loop, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            sessionLimit: .seconds(2))
        let model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        let core = DashboardLoop(
            port: bridge, state: bridge.state, link: bridge.link.state, model: model, loop: loop, metrics: DashboardMetrics(), maxSpeed: 240,
            scanner: { FakeScanner() }, saveLink: { (_: String) throws(ConfigErrors) -> String in "unused.toml" })
        let hub = DashboardHub { _, _ in }
        core.hub = hub
        bridge.start()
        let joins = JoinCodes()
        let sessions = SessionStore()
        core.startJoins(joins, base: "http://127.0.0.1:8080", perTurn: true, sessions: sessions)
        let firstURL = "http://127.0.0.1:8080/join?code=" + joins.current.code
        XCTAssertEqual(model.snapshot.join?.url, firstURL, "the live view has the code")
        XCTAssertEqual(model.snapshot.join?.lines, try QRCode(encoding: firstURL).terminalLines)
        XCTAssertEqual(hub.latestJoin().page?.url, firstURL, "and the page")

        // A phone joins (as GET /join does) and drives.
        XCTAssertTrue(joins.redeem(joins.current.code))
        let session = sessions.create()
        joins.joined(session: session)
        core.handle(.joinCodeSpent, from: 0)
        let secondURL = try XCTUnwrap(model.snapshot.join?.url)
        XCTAssertNotEqual(secondURL, firstURL, "the next phone scans the next code")
        let phone = hub.subscribe(session: session).id
        core.handle(.message(.control(.steer(30))), from: phone)
        core.handle(.message(.control(.engine)), from: phone)
        core.handle(.message(.control(.speedUp)), from: phone)
        XCTAssertEqual(link.texts.last, "R,1,10,1")
        for _ in 0..<7 {
            try loop.advance(by: .milliseconds(250))
            core.handle(.message(.ping), from: phone)
        }
        XCTAssertFalse(hub.isRevoked(phone))
        XCTAssertTrue(model.snapshot.state.engineOn)

        // The turn ends at 2 s: engine off, the phone's controls gone, a new code.
        try loop.advance(by: .milliseconds(250))
        XCTAssertFalse(model.snapshot.state.engineOn)
        XCTAssertEqual(link.texts.last, "E,0,0,0")
        XCTAssertTrue(hub.isRevoked(phone), "the phone's connection is told")
        XCTAssertFalse(sessions.isValid(session), "and its cookie no longer grants controls")
        XCTAssertNotEqual(model.snapshot.join?.url, secondURL, "a fresh code for the next turn")
        XCTAssertFalse(joins.redeem(String(secondURL.split(separator: "=").last!)), "the last turn's code is void")
        // Messages from the revoked phone still in the mailbox do nothing.
        core.handle(.message(.control(.engine)), from: phone)
        XCTAssertFalse(model.snapshot.state.engineOn)
    }
}

/// How many times the web side told the loop a join code was spent.
private final class SpentCount: @unchecked Sendable {
    let lock = ConditionLock()
    var count = 0
}
