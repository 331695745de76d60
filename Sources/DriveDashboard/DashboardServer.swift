import DriveConfig
import DriveCore
import DriveSystem
import DriveWebProtocol
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix

/// The web side: Hummingbird (HTTP/1.1 + WebSocket upgrade) on a NIO event-loop group of one thread of
/// its own, its handlers on Swift concurrency's pool — never on carbridge's event loop. It reaches the
/// run only through the `DashboardHub`.
///
/// Routes: `GET /` the operator's page (`/?token=…` once: an operator's session cookie, then a redirect to
/// `/`), `POST /login` the same from the page's form, `GET /drive` the driver's page (one phone screen),
/// `GET /manifest.webmanifest` and `/icon.svg` (the driver's page installed as an app), `GET /metrics` the
/// Prometheus text, `GET /ws` the WebSocket (state out, controls in), `GET /join?code=…` a phone's one-time
/// join (the QR code: a driver's session cookie, then a redirect to `/drive`; a spent code is refused). A WebSocket upgrade with a foreign `Origin` is not made: hummingbird-websocket
/// answers a refused upgrade with a bare `400` and closes (a browser's page sees only a failed
/// WebSocket either way); it is counted in `carbridge_dashboard_refused_upgrades_total`.
///
/// With a `certificate` the same routes are served over HTTPS only (swift-nio-ssl under Hummingbird's
/// HTTP/1.1 and WebSocket upgrade): the cookie is `Secure`, and only `https://` origins are this page's.
package final class DashboardServer: @unchecked Sendable {
    private let access: DashboardAccess
    private let sessions: SessionStore
    private let hub: DashboardHub
    private let metrics: DashboardMetrics
    private let joins: JoinCodes?
    /// `[dashboard] tilt_hz`, told to each page in its hello.
    private let tiltHz: Int
    /// `[steering] input_timeout_ms`: a driving phone silent this long is lost input (its page's heartbeat is a
    /// third of it).
    private let phoneTimeout: Duration
    private let certificate: DashboardCertificate?
    private let camera: CameraURL?
    private let pageHTML: String
    private let driverHTML: String
    private let pagePolicy: ContentSecurityPolicy
    private let driverPolicy: ContentSecurityPolicy
    private let warn: @Sendable (String) -> Void
    private let limits: DashboardLimits
    private let connections: ConnectionTable
    private let loginGate: AttemptGate
    private let joinGate: AttemptGate
    private let closeLog = LogBurst()
    private var scheme: String { certificate == nil ? "http" : "https" }
    private var group: MultiThreadedEventLoopGroup?
    private var task: Task<Void, Never>?
    private var taskEnd: Handoff<Bool>?

    /// Creates a server (nothing listens until `start`): HTTPS with `certificate`, else HTTP; the page shows
    /// `camera` when set; `joins`: the join codes when a QR code is shown (nil: `/join` refuses every code);
    /// `limits`: what one client gets before it is refused; `warn`: tells a refusal in the log (called on the web
    /// side's threads: it must hand the line to whoever owns the log).
    package init(
        access: DashboardAccess, sessions: SessionStore = SessionStore(), hub: DashboardHub, metrics: DashboardMetrics,
        joins: JoinCodes? = nil, tiltHz: Int = 20, phoneTimeout: Duration = .milliseconds(500),
        certificate: DashboardCertificate? = nil, camera: CameraURL? = nil, limits: DashboardLimits = DashboardLimits(),
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.limits = limits
        self.warn = warn
        connections = ConnectionTable(
            perAddress: limits.connectionsPerAddress,
            rate: AttemptLimiter(burst: limits.connectionBurst, interval: .nanoseconds(1_000_000_000 / Int64(max(limits.connectionsPerSecond, 1)))))
        loginGate = AttemptGate(AttemptLimiter(burst: limits.attemptBurst, interval: limits.attemptInterval))
        joinGate = AttemptGate(AttemptLimiter(burst: limits.attemptBurst, interval: limits.attemptInterval))
        self.joins = joins
        self.tiltHz = tiltHz
        self.phoneTimeout = phoneTimeout
        self.access = access
        self.sessions = sessions
        self.hub = hub
        self.metrics = metrics
        self.certificate = certificate
        self.camera = camera
        pageHTML = DashboardPage.render(camera: camera, fingerprint: certificate?.fingerprint)
        driverHTML = DriverPage.html
        pagePolicy = ContentSecurityPolicy(html: pageHTML, camera: camera)
        driverPolicy = ContentSecurityPolicy(html: driverHTML)
    }

    /// Starts listening on `address` and returns the bound port once it does (at most 5 s); throws when
    /// the address cannot be bound.
    package func start(address: ListenAddress) throws -> Int {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        let outcome = Handoff<Result<Int, DashboardError>>()
        let wsConfiguration = WebSocketServerConfiguration(
            maxFrameSize: ClientMessage.frameLimit, autoPing: .enabled(timePeriod: .seconds(10)), closeTimeout: .seconds(2))
        // The parser's own limits sit inside the guard's limit on the whole head, which answers first.
        let http1 = HTTP1Channel.Configuration(
            idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.headBytes, maxHeaderListSize: limits.headBytes, maxHeaderFieldCount: 100))
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(http1: http1, ws: wsConfiguration)
        // A certificate swift-nio-ssl cannot load fails `app.run`, which `start` reports as "cannot listen on …".
        let tls = certificate?.serverConfiguration
        let guardLimits = ConnectionGuard.Limits(
            headTimeout: .nanoseconds(limits.headTimeout.nanoseconds), headLimit: limits.headBytes)
        let report: @Sendable (ConnectionGuard.Event) -> Void = { [self] event in closed(event) }
        let server = HTTPServerBuilder { [self, connections] responder in
            let base = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: channelConfiguration) { [self] head, channel, _ in
                upgrade(head, loopback: Self.isLoopback(channel.remoteAddress?.ipAddress), address: ConnectionGuard.key(channel.remoteAddress))
            }
            // Behind TLS, so the guard reads the request in clear; its clock starts before the handshake.
            let guarded = GuardedChannel(base: base, table: connections, limits: guardLimits, report: report)
            if let tls { return try TLSChannel(guarded, tlsConfiguration: tls) }
            return guarded
        }
        let app = Application(
            router: makeRouter(),
            server: server,
            configuration: .init(
                address: .hostname(address.host, port: address.port),
                availableConnectionsDelegate: MaximumAvailableConnections(limits.connections)),
            onServerRunning: { channel in outcome.finish(.success(channel.localAddress?.port ?? address.port)) },
            eventLoopGroupProvider: .shared(group),
            logger: Logger(label: "carbridge.dashboard") { _ in SwiftLogNoOpLogHandler() })
        let end = Handoff<Bool>()
        taskEnd = end
        task = Task.detached {
            defer { end.finish(true) }
            do {
                try await app.run()
                outcome.finish(.failure(DashboardError("the server stopped")))
            } catch {
                outcome.finish(.failure(DashboardError("\(error)")))
            }
        }
        switch outcome.wait(seconds: 5) {
        case .success(let port)?:
            return port
        case .failure(let error)?:
            stop()
            throw DashboardError("cannot listen on \(address): \(error)")
        case nil:
            stop()
            throw DashboardError("cannot listen on \(address): not listening after 5 s")
        }
    }

    /// Stops the server: Hummingbird's graceful shutdown (the task cancelled) first, for at most 2 s, then its
    /// event loops (does not wait for their threads). The other way round, the shutdown's last tasks were
    /// scheduled on loops already shut down (SwiftNIO: "Cannot schedule tasks on an EventLoop that has already
    /// shut down", to become a crash).
    package func stop() {
        task?.cancel()
        task = nil
        _ = taskEnd?.wait(seconds: 2)
        taskEnd = nil
        if let group {
            self.group = nil
            group.shutdownGracefully { _ in }
        }
    }

    // MARK: HTTP

    private func makeRouter() -> Router<DashboardRequestContext> {
        let router = Router(context: DashboardRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        router.get("/") { [self] request, context -> Response in
            if let token = URLEncodedForm.value(of: "token", inQuery: request.uri.string) {
                return login(token: token, from: context.clientAddress)
            }
            return page()
        }
        router.get("/drive") { [self] _, _ -> Response in
            var headers = Self.securityHeaders()
            headers[.contentType] = "text/html; charset=utf-8"
            headers[.contentSecurityPolicy] = driverPolicy.header
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: driverHTML)))
        }
        router.get("/manifest.webmanifest") { _, _ -> Response in
            Self.asset(DriverPage.manifest, type: "application/manifest+json")
        }
        router.get("/icon.svg") { _, _ -> Response in
            Self.asset(DriverPage.icon, type: "image/svg+xml")
        }
        router.get("/join") { [self] request, context -> Response in
            join(code: URLEncodedForm.value(of: "code", inQuery: request.uri.string) ?? "", from: context.clientAddress)
        }
        router.post("/login") { [self] request, context -> Response in
            let body = try await request.body.collect(upTo: 1024)
            let form = String(buffer: body)
            let token = URLEncodedForm.value(of: "token", inForm: form) ?? ""
            return login(token: token, from: context.clientAddress)
        }
        router.get("/metrics") { [self] _, _ -> Response in
            var headers = Self.securityHeaders()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.render())))
        }
        // A request for /ws that was not upgraded: a foreign Origin, or not a WebSocket handshake.
        router.get("/ws") { [scheme] request, _ -> Response in
            let origin = request.headers[.origin]
            if !DashboardAccess.originAllowed(origin: origin, host: request.head.authority, scheme: scheme) {
                return Self.text(.forbidden, "WebSocket refused: Origin \(origin ?? "") is not this dashboard (\(request.head.authority ?? "no Host"))\n")
            }
            return Self.text(.badRequest, "WebSocket only: /ws takes a WebSocket upgrade\n")
        }
        return router
    }

    private func page() -> Response {
        var headers = Self.securityHeaders()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = pagePolicy.header
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: pageHTML)))
    }

    /// A static file of the pages (`Cache-Control: no-store` like everything here: it is small).
    static func asset(_ text: String, type: String) -> Response {
        var headers = securityHeaders()
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func login(token: String, from address: String) -> Response {
        guard access.controls, access.token != nil else {
            return Self.text(.notFound, "no token is configured: there is nothing to log in to\n")
        }
        if let refusal = throttle(loginGate, address, what: "login") { return refusal }
        guard access.tokenMatches(token) else {
            metrics.rejectedMessages.increment()
            return Self.text(.forbidden, "wrong token\n")
        }
        var headers = Self.securityHeaders()
        headers[.setCookie] = DashboardAccess.setCookie(session: sessions.create(role: .operator), secure: certificate != nil)
        headers[.location] = "/"
        return Response(status: .seeOther, headers: headers)
    }

    /// A phone's one-time join: the current code gets a driver's session (drive and watch only) and the
    /// driver's page, and the next code is shown; any other code is refused with a sentence a person can act on.
    private func join(code: String, from address: String) -> Response {
        guard let joins else {
            metrics.joinsRefused.increment()
            return Self.text(.notFound, "joining by QR code is off on this dashboard ([dashboard] join)\n")
        }
        if let refusal = throttle(joinGate, address, what: "join") { return refusal }
        guard joins.redeem(code) else {
            metrics.joinsRefused.increment()
            return Self.text(.forbidden, "this join code was already used (or is not one): scan the code shown now\n")
        }
        let session = sessions.create(role: .driver)
        joins.joined(session: session)
        metrics.joins.increment()
        hub.send(.joinCodeSpent, from: 0)
        var headers = Self.securityHeaders()
        headers[.setCookie] = DashboardAccess.setCookie(session: session, secure: certificate != nil)
        headers[.location] = "/drive"
        return Response(status: .seeOther, headers: headers)
    }

    /// nil when `address` may make this attempt; else the `429` that refuses it unchecked (and, for the first
    /// refusal of a burst, one line in the log).
    private func throttle(_ gate: AttemptGate, _ address: String, what: String) -> Response? {
        guard case .refuse(let retryAfter, let firstOfBurst) = gate.attempt(from: address, at: Self.now()) else { return nil }
        metrics.throttledAttempts.increment()
        let seconds = max(1, Int((retryAfter.nanoseconds + 999_999_999) / 1_000_000_000))
        if firstOfBurst {
            warn(
                "dashboard: too many \(what) attempts from \(address): refused unchecked from now on (\(limits.attemptBurst) at once, then one every \(Int(limits.attemptInterval.milliseconds)) ms)")
        }
        var response = Self.text(.tooManyRequests, "too many \(what) attempts from this address: try again in \(seconds) s\n")
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    /// A connection closed by a limit: counted, and told in the log at most once in a while per address and
    /// reason (a flood would otherwise write a line per connection).
    private func closed(_ event: ConnectionGuard.Event) {
        let reason: String
        let who: String
        let line: String
        switch event {
        case .refused(let address):
            (reason, who) = ("address_limit", address)
            line = "dashboard: \(address) holds \(limits.connectionsPerAddress) connections already: closing its new ones"
        case .tooFast(let address):
            (reason, who) = ("address_rate", address)
            line = "dashboard: \(address) opens connections faster than \(limits.connectionBurst) at once, then \(limits.connectionsPerSecond) a second: closing its new ones"
        case .headTimedOut(let address):
            (reason, who) = ("head_timeout", address)
            line = "dashboard: \(address) sent no complete request within \(Int(limits.headTimeout.milliseconds)) ms: closed"
        case .headTooLong(let address):
            (reason, who) = ("head_too_long", address)
            line = "dashboard: \(address) sent a request head over \(limits.headBytes) bytes: closed"
        case .messageFlood(let address):
            (reason, who) = ("message_flood", address)
            line = "dashboard: \(address) sent over \(limits.floodMessagesPerSecond) WebSocket messages a second: closed (1008)"
        }
        metrics.refusedConnections[reason]?.increment()
        if closeLog.allow("\(reason) \(who)", at: Self.now()) { warn(line) }
    }

    /// True for an address of this machine's loopback (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6).
    static func isLoopback(_ address: String?) -> Bool {
        guard let address else { return false }
        return address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// The headers of every response: never cached (state and session pages), nothing sniffed, no `Referer`
    /// (a `/?token=…` or `/join?code=…` address never leaks to another site), never framed. A page replaces the
    /// policy with its own (`ContentSecurityPolicy`).
    static func securityHeaders() -> HTTPFields {
        var headers = HTTPFields()
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = ContentSecurityPolicy.noPage
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
        return headers
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = securityHeaders()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    // MARK: WebSocket

    private func upgrade(_ head: HTTPRequest, loopback: Bool, address: String) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard head.path?.split(separator: "?").first == "/ws" else { return .dontUpgrade }
        guard DashboardAccess.originAllowed(origin: head.headerFields[.origin], host: head.authority, scheme: scheme) else {
            metrics.refusedUpgrades.increment()
            return .dontUpgrade
        }
        let session = CookieHeader.value(of: DashboardAccess.cookieName, in: head.headerFields[.cookie])
        let role = sessions.role(of: session)
        let grant = access.grant(role: role)
        let device = ClientLabel.device(userAgent: head.headerFields[.userAgent])
        return .upgrade([:]) { [self] inbound, outbound, _ in
            await serve(
                inbound: inbound, outbound: outbound, grant: grant, session: role != nil ? session : nil, loopback: loopback, device: device,
                address: address)
        }
    }

    /// One browser connection: the hello, then states out and messages in until it closes.
    /// The join code goes to the operator and to connections from this machine (the kiosk's own screen), never
    /// to a driver and never to a view-only browser elsewhere: who sees the code can drive.
    private func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, grant: DashboardAccess.Grant, session: String?,
        loopback: Bool, device: ClientLabel, address: String
    ) async {
        let (id, wakeups, poke) = hub.subscribe(session: session)
        metrics.clients.record(hub.connectionCount)
        let label = device.label(client: id)
        var hello = JSONWriter()
        hello.field("type", "hello")
        if case .viewOnly(let reason) = grant { hello.field("reason", reason) }
        let canControl = grant.drives
        hello.field("controls", canControl)
        hello.field("role", grant.roleName)
        hello.field("tokenLogin", access.controls && access.token != nil)
        // Who this page is (the state's driver is compared with it), how often a driving phone may report, and
        // its heartbeat while nothing moves: a third of the silence that stops the car.
        hello.field("you", label)
        hello.field("tiltHz", tiltHz)
        hello.field("inputTimeoutMs", Int(phoneTimeout.milliseconds))
        hello.field("heartbeatMs", max(1000 / max(tiltHz, 1), Int(phoneTimeout.milliseconds) / 3))
        if canControl { hub.send(.connected(label: label), from: id) }
        try? await outbound.write(.text(hello.finish()))
        let startsWithControls = canControl
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await self.pushStates(wakeups, poke: poke, to: outbound, client: id, controls: startsWithControls,
                                      seesJoinCode: grant == .control || (loopback && grant != .driver))
            }
            await readMessages(inbound, outbound, client: id, grant: grant, address: address)
            hub.unsubscribe(id)
            group.cancelAll()
        }
        metrics.clients.record(hub.connectionCount)
        if canControl { hub.send(.disconnected, from: id) }
    }

    private func pushStates(
        _ wakeups: AsyncStream<Void>, poke: AsyncStream<Void>.Continuation, to outbound: WebSocketOutboundWriter, client: Int,
        controls: Bool, seesJoinCode: Bool
    ) async {
        var coalescer = SnapshotCoalescer()
        var pokeAt: Instant?
        var controls = controls
        var joinSent: Int?
        for await _ in wakeups {
            if controls && hub.isRevoked(client) {
                // A joined phone's turn is over: it watches from now on (the loop has already let go of its steering).
                controls = false
                let hello = JSONWriter.object(
                    [("type", "hello"), ("reason", "your turn is over: scan the code shown now to drive again"), ("role", "viewer")],
                    flags: [("controls", false), ("tokenLogin", true)])
                do { try await outbound.write(.text(hello)) } catch { return }
            }
            let join = hub.latestJoin()
            let joinVersion = seesJoinCode ? join.version : -1
            if joinVersion != joinSent {
                joinSent = joinVersion
                var fields = [("type", "join")]
                if joinVersion >= 0, let page = join.page { fields += [("url", page.url), ("svg", page.svg)] }
                do { try await outbound.write(.text(JSONWriter.object(fields))) } catch { return }
            }
            // The loop's words (another tab drives, a silent sensor) go out first, whatever the coalescer says about states.
            for reply in hub.takeReplies(client) {
                do {
                    try await outbound.write(.text(JSONWriter.object([("type", reply.kind.rawValue), ("reason", reply.text)])))
                } catch {
                    return
                }
            }
            guard let latest = hub.latest() else { continue }
            let now = Self.now()
            switch coalescer.offer(version: latest.version, key: latest.key, at: now) {
            case .send:
                guard let json = hub.latestJSON(now: now) else { continue }
                do {
                    try await outbound.write(.text(json))
                } catch {
                    return
                }
            case .wait(let due):
                guard pokeAt != due else { continue }
                pokeAt = due
                let delay = due.duration(since: now)
                Task {
                    try? await Task.sleep(for: delay)
                    poke.yield()
                }
            case .nothing:
                break
            }
        }
    }

    private func readMessages(
        _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, client: Int, grant: DashboardAccess.Grant,
        address: String
    ) async {
        var limit = MessageRateLimit()
        // Far past the limit (no page sends that much): the client floods, and even dropping its messages costs the
        // web side's threads what the driver's page needs, so the connection goes.
        var flood = MessageRateLimit(perSecond: Double(limits.floodMessagesPerSecond), burst: Double(limits.floodMessagesPerSecond) * 2)
        var lastLimitReply: Instant?
        // Each refusal is counted; only some are answered, so a client that sends refused messages on purpose
        // cannot make the server spend a write on each.
        var answers = MessageRateLimit(perSecond: 5, burst: 10)
        func reject(_ reason: String) async {
            metrics.rejectedMessages.increment()
            guard answers.allow(at: Self.now()) else { return }
            try? await outbound.write(.text(JSONWriter.object([("type", "rejected"), ("reason", reason)])))
        }
        do {
            for try await message in inbound.messages(maxSize: ClientMessage.frameLimit) {
                let now = Self.now()
                guard flood.allow(at: now) else {
                    closed(.messageFlood(address: address))
                    try? await outbound.close(.policyViolation, reason: "too many messages")
                    return
                }
                guard limit.allow(at: now) else {
                    metrics.rejectedMessages.increment()
                    if lastLimitReply.map({ now.duration(since: $0) >= .seconds(1) }) ?? true {
                        lastLimitReply = now
                        await reject("too many messages (at most 50 a second): dropped")
                    }
                    continue
                }
                guard case .text(let text) = message else {
                    await reject("binary messages are not accepted")
                    continue
                }
                let parsed: ClientMessage
                do {
                    parsed = try ClientMessage.parse(text)
                } catch {
                    await reject(error.reason)
                    continue
                }
                let current = hub.isRevoked(client) ? .viewOnly(reason: "your turn is over: scan the code shown now") : grant
                switch DashboardAccess.admit(parsed, grant: current) {
                case .forward: hub.send(.message(parsed), from: client)
                case .drop: continue
                case .refuse(let reason): await reject(reason)
                }
            }
        } catch {
            // A protocol error or an oversized message: WSCore closes the connection (1002 / 1009).
        }
    }

    static func now() -> Instant { Instant(nanoseconds: MonotonicClock.nanoseconds()) }
}

/// A dashboard failure, in words.
package struct DashboardError: Error, CustomStringConvertible, Sendable {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// A value handed from the server's task to a waiting thread, the first one only: "listening on port N"
/// or "failed" for `start`, and that the task has returned for `stop`.
private final class Handoff<Value: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value?

    func finish(_ newValue: Value) {
        lock.withLock {
            if value == nil { value = newValue }
            lock.broadcast()
        }
    }

    /// The value, or nil when none came within `seconds`.
    func wait(seconds: Int64) -> Value? {
        let deadline = Instant(nanoseconds: MonotonicClock.nanoseconds() + seconds * 1_000_000_000)
        return lock.withLock {
            while value == nil {
                if !lock.wait(until: deadline) { break }
            }
            return value
        }
    }
}
