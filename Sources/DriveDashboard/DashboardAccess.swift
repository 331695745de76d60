import DriveSystem

/// Who may do what on the dashboard (pure checks plus the session store; no I/O).
///
/// - View only by default: anyone who can reach the port sees the page, the state and `/metrics`.
/// - Controls (`[dashboard] controls = true`): with a `token`, only a browser that presented it once
///   (`/?token=…` or `POST /login`) and holds the session cookie it got then (`HttpOnly`,
///   `SameSite=Strict`, a random id, never the token itself); without a token (allowed on a loopback
///   address only, the config check refuses the rest) every local browser.
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

    /// What a connection may do.
    package enum Grant: Hashable, Sendable {
        /// Watch only; the reason controls are refused.
        case viewOnly(reason: String)
        /// Watch and drive.
        case control
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

    /// Controls, the Bluetooth search and picking a car need a grant with controls; a view-only
    /// connection's are refused with the grant's reason.
    package static func admit(_ message: ClientMessage, grant: Grant) -> Admission {
        switch grant {
        case .control: return .forward
        case .viewOnly(let reason):
            // A view-only page pings and says release when hidden like any other: nothing to refuse.
            return message == .ping || message == .release ? .drop : .refuse("refused: \(reason)")
        }
    }

    /// The grant of a connection that holds `session` (a valid session id, or nil).
    package func grant(sessionValid: Bool) -> Grant {
        guard controls else { return .viewOnly(reason: "this dashboard is view only ([dashboard] controls = false)") }
        if token == nil || sessionValid { return .control }
        return .viewOnly(reason: "controls need the token: open this page once as /?token=…")
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

    /// The value of cookie `name` in a `Cookie` request header (`a=b; c=d`), if present.
    package static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.drop { $0 == " " || $0 == "\t" }
            guard let equals = pair.firstIndex(of: "=") else { continue }
            if pair[..<equals] == name { return String(pair[pair.index(after: equals)...]) }
        }
        return nil
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
    private var sessions: [String] = []
    /// How many sessions are kept.
    package let limit: Int

    /// Creates an empty store.
    package init(limit: Int = 64) { self.limit = limit }

    /// A new random session id (128 bits, hex), remembered.
    package func create() -> String {
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
            sessions.append(id)
            if sessions.count > limit { sessions.removeFirst(sessions.count - limit) }
        }
        return id
    }

    /// Forgets the sessions `ids` (a join's session at the end of its kiosk turn): they no longer grant controls.
    package func revoke(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        lock.withLock { sessions.removeAll { ids.contains($0) } }
    }

    /// True when `id` was handed out (and not evicted).
    package func isValid(_ id: String?) -> Bool {
        guard let id, id.utf8.count == 32 else { return false }
        return lock.withLock { sessions.contains(id) }
    }
}
