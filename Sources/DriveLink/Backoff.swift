/// Reconnect delays: 0.5 s, doubling, at most 5 s; `reset()` after a successful connect.
public struct Backoff: Hashable, Sendable {
    /// The first delay.
    public var initial: Duration
    /// The largest delay.
    public var maximum: Duration
    private var current: Duration?

    /// Creates a back-off (defaults from docs/protocol.md §6).
    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt; each call doubles it, up to `maximum`.
    public mutating func next() -> Duration {
        let delay = current.map { min($0 * 2, maximum) } ?? min(initial, maximum)
        current = delay
        return delay
    }

    /// Starts again from `initial` (after a successful connect).
    public mutating func reset() { current = nil }
}
