import DriveCore

/// Decides when a sensor that should report by itself (an accelerometer) counts as lost: no
/// usable sample for `timeout` after it was opened or after its last sample (protocol §6).
///
/// Pure: the caller arms a timer at `deadline` and calls `expire(at:)` when it fires. Each newly
/// opened sensor starts with a clean slate, so a replacement that never delivers is reported lost
/// too, not only the first one.
public struct SampleWatchdog: Hashable, Sendable {
    /// How long a sensor may stay silent.
    public let timeout: Duration
    /// When the sensor counts as lost unless a sample comes first; nil while nothing is watched
    /// (no sensor open, or already reported lost).
    public private(set) var deadline: Instant?
    /// True after a silence was reported, until the next sample.
    public private(set) var isSilent = false

    /// Creates a watchdog for `timeout`.
    public init(timeout: Duration) {
        self.timeout = timeout
        timeoutNanoseconds = timeout.nanoseconds
    }

    /// `timeout` in nanoseconds, worked out once (`Duration` arithmetic is 128-bit; this runs per sample).
    private let timeoutNanoseconds: Int64

    /// A sensor was opened at `now`: it has `timeout` to deliver its first sample.
    public mutating func opened(at now: Instant) {
        isSilent = false
        deadline = now.advanced(by: timeout)
    }

    /// A usable sample arrived at `now`; returns true when the sensor had been reported silent.
    @discardableResult
    public mutating func sample(at now: Instant) -> Bool {
        let wasSilent = isSilent
        isSilent = false
        deadline = Instant(nanoseconds: now.nanoseconds &+ timeoutNanoseconds)
        return wasSilent
    }

    /// The timer fired at `now`; returns true exactly once per silence: report the input lost.
    public mutating func expire(at now: Instant) -> Bool {
        guard let deadline, now >= deadline, !isSilent else { return false }
        isSilent = true
        self.deadline = nil
        return true
    }

    /// The sensor was closed: nothing to watch until the next one opens.
    public mutating func closed() { deadline = nil }
}
