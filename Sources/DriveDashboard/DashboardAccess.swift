import DriveSystem
import DriveWebProtocol

/// Who may do what on the dashboard (pure checks plus the session store; no I/O).
///
/// - View only by default: anyone who can reach the port sees the page, the state and `/metrics`.
/// - Controls (`[dashboard] controls = true`): with a `token`, only a browser that presented it once
///   (`/?token=…` or `POST /login`) and holds the session cookie it got then (`HttpOnly`,
///   `SameSite=Strict`, a random id, never the token itself); without a token (allowed on a loopback
///   address only, the config check refuses the rest) every local browser.
/// - Two roles: the token makes the *operator* (everything the page offers); a join code (the QR code) makes a
///   *driver*, who may drive and watch and nothing else: no Bluetooth search, no car saved into the config
///   file, no join code shown. The server enforces it; the pages only hide what a role cannot use.
/// - A WebSocket upgrade whose `Origin` is not this server (its scheme + the request's `Host`) is refused,
///   so another site open in the same browser cannot drive the car through the cookie.
package struct DashboardAccess: Sendable {
    /// The cookie that carries a session id.
    package static let cookieName = "carbridge_session"

    /// Whether the dashboard accepts controls at all.
    package var controls: Bool
    /// The token, when one is configured.
    package var token: String?

    /// Creates the policy.
    package init(controls: Bool, token: String?) {
        self.controls = controls
        self.token = token
    }

    /// Who holds a session.
    package enum Role: String, Hashable, Sendable {
        /// Logged in with the token: drives, searches for cars, saves one, sees the join code.
        case `operator`
        /// Joined by a QR code: drives and watches only.
        case driver
    }

    /// What a connection may do.
    package enum Grant: Hashable, Sendable {
        /// Watch only; the reason controls are refused.
        case viewOnly(reason: String)
        /// Watch, drive and run the kiosk (the operator).
        case control
        /// Watch and drive only (a phone that joined by QR code).
        case driver

        /// The role's name the pages are told (`operator`, `driver`, `viewer`).
        package var roleName: String {
            switch self {
            case .control: return Role.operator.rawValue
            case .driver: return Role.driver.rawValue
            case .viewOnly: return "viewer"
            }
        }

        /// True when the connection may drive.
        package var drives: Bool {
            if case .viewOnly = self { return false }
            return true
        }
    }

    /// What the web side does with a valid message from a connection with `grant`.
    package enum Admission: Hashable, Sendable {
        /// Hand it to the loop.
        case forward
        /// Drop it silently (a view-only tab's ping).
        case drop
        /// Answer `{"type":"rejected","reason":…}`.
        case refuse(String)
    }

    /// Controls need a grant that drives; the Bluetooth search and picking a car need the operator's. A
    /// view-only connection's are refused with the grant's reason, a driver's operator messages with what
    /// they would have done.
    package static func admit(_ message: ClientMessage, grant: Grant) -> Admission {
        switch grant {
        case .control: return .forward
        case .driver:
            switch message {
            case .bluetoothScan:
                return .refuse("refused: searching for cars is the operator's (a phone that joined by QR code drives and watches only)")
            case .bluetoothPick:
                return .refuse("refused: choosing the car saves it in the kiosk's config file, which is the operator's (a phone that joined by QR code drives and watches only)")
            case .control, .ping, .tilt, .stick, .straight, .release:
                return .forward
            }
        case .viewOnly(let reason):
            // A view-only page pings and says release when hidden like any other: nothing to refuse.
            return message == .ping || message == .release ? .drop : .refuse("refused: \(reason)")
        }
    }

    /// The grant of a connection whose session has `role` (nil: no valid session). A joined phone is a
    /// driver even where no token is configured (a loopback dashboard, where every other browser operates).
    package func grant(role: Role?) -> Grant {
        guard controls else { return .viewOnly(reason: "this dashboard is view only ([dashboard] controls = false)") }
        switch role {
        case .driver?: return .driver
        case .operator?: return .control
        case nil:
            if token == nil { return .control }
            return .viewOnly(reason: "controls need the token (open this page once as /?token=…) or a join code (scan the QR code)")
        }
    }

    /// True when `candidate` is the configured token (compared in constant time for its length).
    package func tokenMatches(_ candidate: String) -> Bool {
        guard let token else { return false }
        let a = Array(token.utf8)
        let b = Array(candidate.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<a.count {
            difference |= a[index] ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    /// The `Set-Cookie` value for a new session; `Secure` over HTTPS, so the browser never sends it in clear.
    package static func setCookie(session: String, secure: Bool = false) -> String {
        "\(cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// Whether a WebSocket upgrade with `origin` (the `Origin` header) to `host` (the `Host` header) is
    /// this page's own: no `Origin` at all (not a browser, so no other site's page either) or exactly
    /// `SCHEME://HOST` with the server's own scheme (`http` or `https`). `null`, another scheme, another
    /// host or another port is foreign.
    package static func originAllowed(origin: String?, host: String?, scheme: String) -> Bool {
        guard let origin else { return true }
        guard let host, !host.isEmpty else { return false }
        return origin.lowercased() == "\(scheme)://\(host.lowercased())"
    }
}

/// The sessions handed out for the token (thread-safe: the web side's threads share it). Bounded: the
/// oldest session goes when `limit` is reached.
package final class SessionStore: @unchecked Sendable {
    private let lock = ConditionLock()
    private var sessions: [(id: String, role: DashboardAccess.Role)] = []
    /// How many sessions are kept.
    package let limit: Int

    /// Creates an empty store.
    package init(limit: Int = 64) { self.limit = limit }

    /// A new random session id (128 bits, hex) for `role`, remembered.
    package func create(role: DashboardAccess.Role = .operator) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var id = ""
        for _ in 0..<2 {
            var word = generator.next() as UInt64
            for _ in 0..<16 {
                id.append(digits[Int(word & 0xF)])
                word >>= 4
            }
        }
        lock.withLock {
            sessions.append((id, role))
            if sessions.count > limit { sessions.removeFirst(sessions.count - limit) }
        }
        return id
    }

    /// Forgets the sessions `ids` (a join's session at the end of its kiosk turn): they no longer grant controls.
    package func revoke(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        lock.withLock { sessions.removeAll { ids.contains($0.id) } }
    }

    /// True when `id` was handed out (and not evicted or revoked).
    package func isValid(_ id: String?) -> Bool { role(of: id) != nil }

    /// The role of session `id`, or nil when it is not a valid session.
    package func role(of id: String?) -> DashboardAccess.Role? {
        guard let id, id.utf8.count == 32 else { return nil }
        return lock.withLock { sessions.first { $0.id == id }?.role }
    }
}
