import DriveCore

/// Makes a browser tab that steers an input device like any other (docs/protocol.md §6): a tab that
/// disconnects, or goes silent for `timeout` (a steering tab pings every 250 ms), while it is steering
/// is lost input — `.inputLost`, so the car stops as for an unplugged pad. The first steer after that
/// (from any tab) restores it (`.inputRestored` before the steer), as a re-plugged pad would.
///
/// A tab is steering from its first steer control until it is lost; Engine, Speed±, Gear and the F-keys
/// alone do not make it one. Pure: time is passed in, and it lives on the event loop with the machine.
package struct SteeringGuard: Sendable {
    /// Silence longer than this from a steering tab is lost input.
    package let timeout: Duration
    /// Steering tabs and when each was last heard from.
    private var steering: [Int: Instant] = [:]
    /// This guard reported the input lost and nothing restored it yet.
    package private(set) var lost = false

    /// Creates a guard (1 s of silence by default).
    package init(timeout: Duration = .seconds(1)) {
        self.timeout = timeout
    }

    /// True when some tab is steering now.
    package var hasSteeringClient: Bool { !steering.isEmpty }

    /// True when `client` is steering now.
    package func isSteering(_ client: Int) -> Bool { steering[client] != nil }

    /// A valid message from `client` with controls, at `now`: the controls to apply, in order.
    package mutating func received(_ message: ClientMessage, from client: Int, at now: Instant) -> [Control] {
        if steering[client] != nil { steering[client] = now }
        guard case .control(let control) = message else { return [] }
        guard case .steer = control else { return [control] }
        steering[client] = now
        if lost {
            lost = false
            return [.inputRestored, control]
        }
        return [control]
    }

    /// `client` disconnected at `now`.
    package mutating func disconnected(_ client: Int, at now: Instant) -> [Control] {
        guard steering.removeValue(forKey: client) != nil else { return [] }
        return loseInput()
    }

    /// The instant a steering tab's silence becomes lost input, if any tab steers.
    package var nextDeadline: Instant? {
        steering.values.min().map { $0.advanced(by: timeout) }
    }

    /// Checks for silent steering tabs at `now`.
    package mutating func tick(at now: Instant) -> [Control] {
        let silent = steering.filter { now.duration(since: $0.value) >= timeout }.map(\.key)
        guard !silent.isEmpty else { return [] }
        for client in silent { steering[client] = nil }
        return loseInput()
    }

    private mutating func loseInput() -> [Control] {
        lost = true
        return [.inputLost]
    }
}

/// Caps how many messages one tab may send (a token bucket: `burst` at once, `perSecond` sustained);
/// the rest are rejected and never reach the loop. Pure.
package struct MessageRateLimit: Sendable {
    /// Sustained messages per second.
    package let perSecond: Double
    /// The most at once.
    package let burst: Double
    private var tokens: Double
    private var last: Instant?

    /// Creates a limit (50 a second, bursts of 50 by default: the page sends at most about 25).
    package init(perSecond: Double = 50, burst: Double = 50) {
        self.perSecond = perSecond
        self.burst = burst
        self.tokens = burst
    }

    /// True when a message arriving at `now` is within the limit (and counts it).
    package mutating func allow(at now: Instant) -> Bool {
        if let last {
            let seconds = Double(now.duration(since: last).nanoseconds) / 1e9
            tokens = min(burst, tokens + max(0, seconds) * perSecond)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
