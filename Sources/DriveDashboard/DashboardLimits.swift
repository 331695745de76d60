import DriveCore

/// What the dashboard gives one client before refusing it: the limits that keep a hostile or broken client on
/// the kiosk's network from starving the driver's page or guessing the token (docs/security.md).
package struct DashboardLimits: Sendable {
    /// Connections the server holds open in all (past it, new ones wait in the kernel's backlog): eight
    /// addresses at their own limit.
    package var connections = 128
    /// Connections one address may hold open (HTTP and WebSocket together); a phone's browser needs a few.
    package var connectionsPerAddress = 16
    /// New connections one address may open at once (a page load and its WebSocket, a reload or two)…
    package var connectionBurst = 32
    /// …and then this many a second: a client that reconnects as fast as it can costs a handshake each time.
    package var connectionsPerSecond = 4
    /// Time from a connection to the end of its first request head (its TLS handshake included).
    package var headTimeout: Duration = .seconds(10)
    /// The most bytes of a request head (the parser's own limits on one header and on all of them are within it).
    package var headBytes = 16 * 1024
    /// A keep-alive connection with no request for this long is closed.
    package var idleTimeout: Duration = .seconds(30)
    /// WebSocket messages a second (sustained, or twice that at once) past which a connection is closed (`1008`): a
    /// page sends at most about 25 and `MessageRateLimit` drops what passes 50, but even dropping a flood costs the
    /// web side's threads what the driver's page needs.
    package var floodMessagesPerSecond = 75
    /// Login (token) and join (code) attempts one address may make at once…
    package var attemptBurst = 5
    /// …and then one every this long.
    package var attemptInterval: Duration = .seconds(2)

    /// The defaults.
    package init() {}
}
