/// A point on a monotonic clock, in nanoseconds since an arbitrary origin.
///
/// DriveCore never reads a clock itself: every instant is handed in by the caller,
/// so tests can drive the state machine with exact, made-up times.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// Creates an instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock's origin; handy in tests.
    public static let zero = Instant(nanoseconds: 0)

    /// An instant `milliseconds` after the origin; handy in tests.
    public static func milliseconds(_ milliseconds: Int64) -> Instant {
        Instant(nanoseconds: milliseconds * 1_000_000)
    }

    /// An instant `seconds` after the origin.
    public static func seconds(_ seconds: Double) -> Instant {
        Instant(nanoseconds: Int64((seconds * 1e9).rounded()))
    }

    /// This instant moved by `duration` (which may be negative).
    public func advanced(by duration: Duration) -> Instant {
        Instant(nanoseconds: nanoseconds &+ duration.nanoseconds)
    }

    /// The signed time from `other` to `self`.
    public func duration(since other: Instant) -> Duration {
        .nanoseconds(nanoseconds &- other.nanoseconds)
    }

    /// Seconds since the origin, as a real number (for display).
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
    public static func - (lhs: Instant, rhs: Instant) -> Duration { lhs.duration(since: rhs) }

    /// The earlier of two deadlines, either of which may be none (nil only when both are).
    public static func earliest(_ a: Instant?, _ b: Instant?) -> Instant? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    public var description: String {
        let ms = nanoseconds / 1_000_000
        let frac = ms % 1000
        let pad = frac < 10 ? "00" : (frac < 100 ? "0" : "")
        return "\(ms / 1000).\(pad)\(frac)s"
    }
}

extension Duration {
    /// The whole duration in nanoseconds (saturating at Int64 bounds).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        return whole &+ attoseconds / 1_000_000_000
    }

    /// The duration in milliseconds as a real number.
    public var milliseconds: Double { Double(nanoseconds) / 1e6 }
}
