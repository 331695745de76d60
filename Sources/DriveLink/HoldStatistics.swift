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
    /// The first `sampleLimit` held frames' waits (for the median); allocated at the first hold.
    private var waits: [Int64] = []

    /// How many waits are kept for the median (32 KiB at most, and only on a link that ever held a frame).
    public static let sampleLimit = 4096

    /// No frames yet.
    public init() {}

    /// A motion frame was written; `waited` is how long it waited when the rule had held it, else nil.
    public mutating func wroteMotionFrame(waited: Int64?) {
        motionFramesWritten += 1
        guard let waited else { return }
        heldFramesWritten += 1
        totalWaitNanoseconds += waited
        maxWaitNanoseconds = max(maxWaitNanoseconds, waited)
        if waits.count < Self.sampleLimit {
            if waits.capacity == 0 { waits.reserveCapacity(Self.sampleLimit) }
            waits.append(waited)
        }
    }

    /// The median wait of the held frames (of the first `sampleLimit`), nil when none was held.
    public var medianWaitNanoseconds: Int64? {
        guard !waits.isEmpty else { return nil }
        let sorted = waits.sorted()
        return sorted[(sorted.count - 1) / 2]
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
