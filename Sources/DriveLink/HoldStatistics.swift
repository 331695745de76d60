import DriveCore

/// What the kernel-queue rule (protocol §5.6) did to a link's motion frames: how many were written,
/// how many a newer frame replaced while they waited, and how long the frames that had to wait for
/// the kernel queue waited before they were written (their extra latency). A pure value, fed by
/// `StreamLink`; logged when the run ends, so a test can read what the rule cost.
public struct HoldStatistics: Hashable, Sendable, CustomStringConvertible {
    /// Motion frames handed to the kernel.
    public private(set) var motionFramesWritten = 0
    /// Motion frames a newer one replaced before they started to go out (`FrameQueue.coalescedFrames`).
    public var coalescedFrames = 0
    /// Motion frames written after the rule held them (the queue had `max_in_flight` frames).
    public private(set) var heldFramesWritten = 0
    /// The longest a held frame waited, from being queued to being written.
    public private(set) var maxWaitNanoseconds: Int64 = 0
    /// The sum of the held frames' waits (for the mean).
    public private(set) var totalWaitNanoseconds: Int64 = 0
    /// The held frames' waits counted in `bucketNanoseconds` steps up to `bucketCount` of them, the
    /// longer ones in the last: allocated once, with the link, so a hold allocates nothing (the
    /// benchmarks' budget is 0 allocations per input event).
    private var buckets = [Int](repeating: 0, count: Self.bucketCount + 1)

    /// The width of a wait bucket: 50 µs (the median is told to within that).
    public static let bucketNanoseconds: Int64 = 50_000
    /// Waits up to 10 ms get a bucket of their own width; longer ones share the last.
    public static let bucketCount = 200

    /// No frames yet.
    public init() {}

    /// A motion frame was written; `waited` is how long it waited when the rule had held it, else nil.
    public mutating func wroteMotionFrame(waited: Int64?) {
        motionFramesWritten += 1
        guard let waited else { return }
        heldFramesWritten += 1
        totalWaitNanoseconds += waited
        maxWaitNanoseconds = max(maxWaitNanoseconds, waited)
        buckets[Int(min(max(0, waited) / Self.bucketNanoseconds, Int64(Self.bucketCount)))] += 1
    }

    /// The median wait of the held frames, nil when none was held: the upper end of the 50 µs bucket
    /// it falls in (past 10 ms, the longest wait).
    public var medianWaitNanoseconds: Int64? {
        guard heldFramesWritten > 0 else { return nil }
        let middle = (heldFramesWritten + 1) / 2
        var seen = 0
        for (index, count) in buckets.enumerated() {
            seen += count
            if seen >= middle {
                return index < Self.bucketCount ? Int64(index + 1) * Self.bucketNanoseconds : maxWaitNanoseconds
            }
        }
        return maxWaitNanoseconds
    }

    /// The mean wait of the held frames, nil when none was held.
    public var meanWaitNanoseconds: Int64? {
        heldFramesWritten > 0 ? totalWaitNanoseconds / Int64(heldFramesWritten) : nil
    }

    /// `1500 motion frames written, 81 coalesced; 120 written after a hold (waited p50 0.620 ms, mean 0.700 ms, max 3.100 ms)`.
    public var description: String {
        var text = "\(motionFramesWritten) motion frames written, \(coalescedFrames) coalesced; \(heldFramesWritten) written after a hold"
        if let median = medianWaitNanoseconds, let mean = meanWaitNanoseconds {
            text += " (waited p50 \(Self.milliseconds(median)) ms, mean \(Self.milliseconds(mean)) ms, max \(Self.milliseconds(maxWaitNanoseconds)) ms)"
        }
        return text
    }

    /// Milliseconds with three decimals, e.g. `0.620`.
    static func milliseconds(_ nanoseconds: Int64) -> String {
        let micros = (nanoseconds + 500) / 1000
        let fraction = String(micros % 1000)
        return "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
