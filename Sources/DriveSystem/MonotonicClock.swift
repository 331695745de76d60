import Glibc

/// Reads CLOCK_MONOTONIC, the clock every deadline in carbridge is measured on.
public enum MonotonicClock {
    /// Nanoseconds since boot (CLOCK_MONOTONIC).
    public static func nanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
