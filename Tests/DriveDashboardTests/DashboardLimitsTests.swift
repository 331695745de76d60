import DriveConfig
import DriveCore
import DriveSystem
import Glibc
import XCTest

@testable import DriveDashboard

/// The dashboard's limits on one client: the login and join throttle (pure, then on a real server), the
/// connection table, and the guard's head timeout and head size on a real server (127.0.0.1, a free port).
final class DashboardLimitsTests: XCTestCase {
    private func at(_ milliseconds: Int64) -> Instant { Instant(nanoseconds: milliseconds * 1_000_000) }

    // MARK: AttemptLimiter

    func testABurstThenOneAttemptPerInterval() {
        var limiter = AttemptLimiter(burst: 3, interval: .seconds(2))
        for _ in 0..<3 { XCTAssertEqual(limiter.attempt(from: "10.0.0.7", at: at(0)), .allow) }
        XCTAssertEqual(limiter.attempt(from: "10.0.0.7", at: at(0)), .refuse(retryAfter: .seconds(2), firstOfBurst: true))
        XCTAssertEqual(limiter.attempt(from: "10.0.0.7", at: at(500)), .refuse(retryAfter: .milliseconds(1500), firstOfBurst: false))
        // Refusals do not cost anything: the token still comes back 2 s after the burst.
        XCTAssertEqual(limiter.attempt(from: "10.0.0.7", at: at(2000)), .allow)
        XCTAssertEqual(limiter.attempt(from: "10.0.0.7", at: at(2001)), .refuse(retryAfter: .milliseconds(1999), firstOfBurst: true))
        // Another address has its own bucket.
        XCTAssertEqual(limiter.attempt(from: "10.0.0.8", at: at(2001)), .allow)
        // A long quiet refills the burst, no more.
        for _ in 0..<3 { XCTAssertEqual(limiter.attempt(from: "10.0.0.7", at: at(60_000)), .allow) }
        XCTAssertNotEqual(limiter.attempt(from: "10.0.0.7", at: at(60_000)), .allow)
    }

    func testAGuessingLoopGetsOneGuessPerInterval() {
        var limiter = AttemptLimiter(burst: 5, interval: .seconds(2))
        var allowed = 0
        // 100 guesses a second for a minute.
        for tick in 0..<6000 where limiter.attempt(from: "192.168.1.50", at: at(Int64(tick) * 10)) == .allow {
            allowed += 1
        }
        XCTAssertEqual(allowed, 5 + 30 - 1, "the burst, then one every 2 s")
    }

    func testTheAddressMemoryIsBoundedAndForgetsARefilledAddressFirst() {
        var limiter = AttemptLimiter(burst: 2, interval: .seconds(1), addressLimit: 2)
        _ = limiter.attempt(from: "a", at: at(0))
        _ = limiter.attempt(from: "b", at: at(5000))
        _ = limiter.attempt(from: "b", at: at(5000))
        _ = limiter.attempt(from: "c", at: at(5000))
        XCTAssertEqual(limiter.addressCount, 2)
        // "a" had refilled and was forgotten; "b" kept its empty bucket.
        XCTAssertNotEqual(limiter.attempt(from: "b", at: at(5000)), .allow)
    }

    // MARK: ConnectionTable

    func testConnectionsPastTheLimitOfOneAddressAreRefused() {
        let table = ConnectionTable(perAddress: 2, rate: AttemptLimiter(burst: 100, interval: .seconds(1)))
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .accept)
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .accept)
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .refuseOpen)
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .refuseOpen)
        XCTAssertEqual(table.open(from: "10.0.0.10", at: at(0)), .accept, "another address is not refused")
        table.close(from: "10.0.0.9")
        XCTAssertEqual(table.count(from: "10.0.0.9"), 1)
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .accept)
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .refuseOpen, "full again")
    }

    func testAnAddressThatReconnectsTooFastIsRefused() {
        let table = ConnectionTable(perAddress: 100, rate: AttemptLimiter(burst: 3, interval: .milliseconds(500)))
        for _ in 0..<3 {
            XCTAssertEqual(table.open(from: "10.0.0.9", at: at(0)), .accept)
            table.close(from: "10.0.0.9")
        }
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(10)), .refuseRate)
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(20)), .refuseRate)
        XCTAssertEqual(table.open(from: "10.0.0.11", at: at(20)), .accept, "another address is not refused")
        XCTAssertEqual(table.open(from: "10.0.0.9", at: at(500)), .accept, "one more every 500 ms")
        XCTAssertEqual(table.count(from: "10.0.0.9"), 1)
    }

    // MARK: A real server

    private final class Lines: @unchecked Sendable {
        private let lock = ConditionLock()
        private var lines: [String] = []
        var all: [String] { lock.withLock { lines } }
        func append(_ line: String) { lock.withLock { lines.append(line) } }
    }

    private var server: DashboardServer?
    private let log = Lines()

    override func tearDown() {
        server?.stop()
        server = nil
    }

    private func start(
        limits: DashboardLimits, joins: JoinCodes? = nil, certificate: DashboardCertificate? = nil
    ) throws -> (port: Int, metrics: DashboardMetrics) {
        let metrics = DashboardMetrics()
        let server = DashboardServer(
            access: DashboardAccess(controls: true, token: "0123456789abcdef"), hub: DashboardHub { _, _ in }, metrics: metrics,
            joins: joins, certificate: certificate, limits: limits, warn: { [log] line in log.append(line) })
        self.server = server
        return (try server.start(address: ListenAddress(host: "127.0.0.1", port: 0)), metrics)
    }

    private func connectTo(_ port: Int) -> Int32 { LoopbackClient.connect(port: port) }
    private func send(_ fd: Int32, _ text: String) { LoopbackClient.send(fd, text) }
    private func readAll(_ fd: Int32) -> String { LoopbackClient.readAll(fd) }
    private func request(_ port: Int, _ text: String) -> String { LoopbackClient.request(port: port, text) }
    private func header(_ name: String, in response: String) -> String? { LoopbackClient.header(name, in: response) }

    func testASlowRequestHeadIsAnswered408AndClosed() throws {
        var limits = DashboardLimits()
        limits.headTimeout = .milliseconds(300)
        let (port, metrics) = try start(limits: limits)
        let fd = connectTo(port)
        defer { close(fd) }
        // A slowloris client: a request line and one header, then nothing.
        send(fd, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        let response = readAll(fd)
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 408 "), response)
        XCTAssertEqual(header("X-Content-Type-Options", in: response), "nosniff")
        XCTAssertTrue(metrics.render().contains(#"carbridge_dashboard_closed_connections_total{reason="head_timeout"} 1"#))
        XCTAssertEqual(log.all.filter { $0.contains("no complete request within 300 ms") }.count, 1, "\(log.all)")
        // A silent connection too.
        let silent = connectTo(port)
        defer { close(silent) }
        XCTAssertTrue(readAll(silent).hasPrefix("HTTP/1.1 408 "))
        // A whole request in time is served.
        XCTAssertTrue(request(port, "GET /drive HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200 "))
    }

    /// Over HTTPS the clock starts before the handshake: a client that opens the connection and never says hello
    /// is closed too.
    func testATLSClientThatNeverFinishesItsHandshakeIsClosed() throws {
        let directory = NSTemporaryDirectory() + "carbridge-limits-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificate = try DashboardCertificate.selfSigned(
            directory: directory, hosts: DashboardCertificate.subjectNames(for: ListenAddress(host: "127.0.0.1", port: 8443)))
        var limits = DashboardLimits()
        limits.headTimeout = .milliseconds(300)
        let (port, metrics) = try start(limits: limits, certificate: certificate)
        let fd = connectTo(port)
        defer { close(fd) }
        // Half a TLS record header, then nothing.
        send(fd, "\u{16}\u{03}")
        _ = readAll(fd)  // returns once the server closes (the receive timeout would fail the metric below)
        XCTAssertTrue(metrics.render().contains(#"carbridge_dashboard_closed_connections_total{reason="head_timeout"} 1"#), metrics.render())
    }

    func testAnOversizedRequestHeadIsAnswered431() throws {
        var limits = DashboardLimits()
        limits.headBytes = 2048
        let (port, metrics) = try start(limits: limits)
        let big = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + String(repeating: "a", count: 4000) + "\r\n\r\n"
        let response = request(port, big)
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 431 "), response)
        XCTAssertTrue(metrics.render().contains(#"carbridge_dashboard_closed_connections_total{reason="head_too_long"} 1"#))
        // Just under the limit is fine.
        let fits = "GET /drive HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Pad: " + String(repeating: "b", count: 1900) + "\r\n\r\n"
        XCTAssertTrue(request(port, fits).hasPrefix("HTTP/1.1 200 "))
    }

    func testConnectionsPastTheAddressLimitAreClosedAndTheOthersServed() throws {
        var limits = DashboardLimits()
        limits.connectionsPerAddress = 3
        let (port, metrics) = try start(limits: limits)
        let held = (0..<3).map { _ in connectTo(port) }
        // The three are accepted: each answers a request on its kept-alive connection.
        for fd in held {
            send(fd, "GET /icon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            var buffer = [UInt8](repeating: 0, count: 4096)
            XCTAssertGreaterThan(read(fd, &buffer, buffer.count), 0)
        }
        // The fourth and fifth are closed without a byte.
        for _ in 0..<2 {
            let extra = connectTo(port)
            XCTAssertEqual(readAll(extra), "")
            close(extra)
        }
        XCTAssertTrue(metrics.render().contains(#"carbridge_dashboard_closed_connections_total{reason="address_limit"} 2"#), metrics.render())
        XCTAssertEqual(log.all.filter { $0.contains("holds 3 connections already") }.count, 1, "one line per burst: \(log.all)")
        // One closed: a new one is served (once the server has seen the close).
        close(held[0])
        var served = false
        for _ in 0..<100 where !served {
            served = request(port, "GET /icon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200 ")
            if !served { usleep(20_000) }
        }
        XCTAssertTrue(served)
        for fd in held.dropFirst() { close(fd) }
    }

    func testLoginAttemptsPastTheBurstAreRefusedUncheckedWithRetryAfter() throws {
        var limits = DashboardLimits()
        limits.attemptBurst = 2
        limits.attemptInterval = .seconds(60)
        let joins = JoinCodes()
        let (port, metrics) = try start(limits: limits, joins: joins)
        func login(_ token: String) -> String {
            request(port, "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(token.utf8.count + 6)\r\n\r\ntoken=\(token)")
        }
        XCTAssertTrue(login("guess-1").hasPrefix("HTTP/1.1 403 "))
        XCTAssertTrue(login("guess-2").hasPrefix("HTTP/1.1 403 "))
        let refused = login("guess-3")
        XCTAssertTrue(refused.hasPrefix("HTTP/1.1 429 "), refused)
        XCTAssertEqual(header("Retry-After", in: refused), "60")
        XCTAssertEqual(header("Referrer-Policy", in: refused), "no-referrer")
        // The right token is not even checked now: a guess that happens to be right is refused like the rest.
        let right = login("0123456789abcdef")
        XCTAssertTrue(right.hasPrefix("HTTP/1.1 429 "), right)
        XCTAssertNil(header("Set-Cookie", in: right))
        // The query-string login shares the limit.
        XCTAssertTrue(request(port, "GET /?token=0123456789abcdef HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .hasPrefix("HTTP/1.1 429 "))
        XCTAssertEqual(log.all.filter { $0.contains("too many login attempts from 127.0.0.1") }.count, 1, "once per burst: \(log.all)")
        XCTAssertTrue(metrics.render().contains("carbridge_dashboard_throttled_attempts_total 3"), metrics.render())
        // Join codes have their own limit: a phone can still join after the login guesses…
        let code = joins.current.code
        XCTAssertTrue(request(port, "GET /join?code=\(code) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 303 "))
        // …and guessing codes is slowed the same way.
        XCTAssertTrue(request(port, "GET /join?code=AAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 403 "))
        XCTAssertTrue(request(port, "GET /join?code=\(joins.current.code) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .hasPrefix("HTTP/1.1 429 "))
        XCTAssertEqual(log.all.filter { $0.contains("too many join attempts") }.count, 1)
    }

    func testEveryAnswerCarriesTheSecurityHeaders() throws {
        let (port, _) = try start(limits: DashboardLimits())
        for path in ["/", "/drive", "/metrics", "/icon.svg", "/manifest.webmanifest", "/join?code=x", "/ws", "/no-such-page"] {
            let response = request(port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            XCTAssertFalse(response.isEmpty, path)
            XCTAssertEqual(header("X-Content-Type-Options", in: response), "nosniff", "\(path): \(response.prefix(300))")
            XCTAssertEqual(header("Referrer-Policy", in: response), "no-referrer", path)
            XCTAssertEqual(header("Cache-Control", in: response), "no-store", path)
            let policy = try XCTUnwrap(header("Content-Security-Policy", in: response), path)
            XCTAssertTrue(policy.contains("frame-ancestors 'none'"), "\(path): \(policy)")
            XCTAssertFalse(policy.contains("unsafe-inline"), "\(path): \(policy)")
        }
    }
}
