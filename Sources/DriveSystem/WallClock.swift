import DriveCore
import Glibc

/// Local wall-clock times for people (the log, the live view): `14:03:27.512`. Deadlines stay on
/// `MonotonicClock`; an `Instant` is shown as the wall time it corresponds to now.
public enum WallClock {
    /// `HH:MM:SS.mmm` (local time) for the moment `instant` (a CLOCK_MONOTONIC instant) was.
    public static func timeOfDay(_ instant: Instant) -> String {
        let age = MonotonicClock.nanoseconds() - instant.nanoseconds
        return timeOfDay(realtimeNanoseconds: realtimeNanoseconds() - age)
    }

    /// `HH:MM:SS.mmm` (local time) now.
    public static func now() -> String { timeOfDay(realtimeNanoseconds: realtimeNanoseconds()) }

    /// `HH:MM:SS.mmm` for nanoseconds since the epoch, in local time.
    public static func timeOfDay(realtimeNanoseconds: Int64) -> String {
        var seconds = time_t(realtimeNanoseconds / 1_000_000_000)
        let milliseconds = Int((realtimeNanoseconds % 1_000_000_000) / 1_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return two(Int(parts.tm_hour)) + ":" + two(Int(parts.tm_min)) + ":" + two(Int(parts.tm_sec)) + "."
            + (milliseconds < 10 ? "00" : milliseconds < 100 ? "0" : "") + String(milliseconds)
    }

    private static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
