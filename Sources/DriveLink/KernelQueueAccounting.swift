import DriveCore

/// What a `StreamLink` knows about the kernel's output queue of one connection, worked out from
/// one reading of it at a time (protocol §5.6 and §6). A pure value: no I/O, no clock, every
/// instant is handed in, so its rules can be tested on exact times.
///
/// It answers three questions: may a motion frame be handed to the kernel now (fewer than
/// `maxInFlight` frames in it), has the queue stalled (not shrunk for `stallTimeout` while
/// something waits), and when should the queue be looked at again.
///
/// Between two readings it keeps an estimate: bytes written since the last reading are counted
/// as still queued (the kernel may have let go of some; the next reading tells), so a flush of
/// several frames needs one reading, not one per frame.
public struct KernelQueueAccounting: Hashable, Sendable {
    /// At most this many motion frames in the kernel at once (at least 1 is allowed).
    public var maxInFlight: Int
    /// A queue that does not shrink for this long, while something waits, is a stall.
    public var stallTimeout: Duration {
        get { .nanoseconds(stallTimeoutNanoseconds) }
        set { stallTimeoutNanoseconds = newValue.nanoseconds }
    }
    /// How soon the queue is looked at again while a motion frame is held (or bytes wait to be written).
    public var heldRecheckInterval: Duration {
        get { .nanoseconds(heldRecheckNanoseconds) }
        set { heldRecheckNanoseconds = newValue.nanoseconds }
    }
    /// How soon the queue is looked at again while someone waits for a flush.
    public var flushRecheckInterval: Duration {
        get { .nanoseconds(flushRecheckNanoseconds) }
        set { flushRecheckNanoseconds = newValue.nanoseconds }
    }
    /// How often the queue is looked at while the kernel holds bytes (stall detection).
    public var queueRecheckInterval: Duration {
        get { .nanoseconds(queueRecheckNanoseconds) }
        set { queueRecheckNanoseconds = newValue.nanoseconds }
    }
    /// True when readings count payload bytes (TCP, ttys), so delivered frames can be told apart;
    /// false when they count buffer memory (RFCOMM, AF_UNIX), so only "empty" is exact.
    public let readingsArePayload: Bool

    // Durations kept in nanoseconds: `Duration` arithmetic is 128-bit, too dear for every frame.
    private var stallTimeoutNanoseconds: Int64
    private var heldRecheckNanoseconds: Int64
    private var flushRecheckNanoseconds: Int64
    private var queueRecheckNanoseconds: Int64

    /// Bytes handed to the kernel on this connection.
    public private(set) var bytesWritten = 0
    /// `bytesWritten` at the end of each frame the kernel may still hold, oldest first.
    private var frameEnds: [Int] = []
    /// The kernel queue at the last reading, plus what was written since (an upper bound).
    public private(set) var queuedBytes = 0
    /// When the queue last shrank, was empty with nothing waiting, or started to fill: the stall clock.
    public private(set) var lastDrain: Instant
    /// True while a motion frame waits because `maxInFlight` frames are in the kernel.
    public private(set) var isHolding = false
    /// True after a write would have blocked, until bytes go out again.
    public private(set) var isWriteBlocked = false

    /// Accounting for a connection that came up at `now` with an empty queue.
    public init(
        at now: Instant, readingsArePayload: Bool, maxInFlight: Int, stallTimeout: Duration,
        heldRecheckInterval: Duration = .milliseconds(1), flushRecheckInterval: Duration = .milliseconds(10),
        queueRecheckInterval: Duration = .milliseconds(50)
    ) {
        self.readingsArePayload = readingsArePayload
        self.maxInFlight = maxInFlight
        self.stallTimeoutNanoseconds = stallTimeout.nanoseconds
        self.heldRecheckNanoseconds = heldRecheckInterval.nanoseconds
        self.flushRecheckNanoseconds = flushRecheckInterval.nanoseconds
        self.queueRecheckNanoseconds = queueRecheckInterval.nanoseconds
        self.lastDrain = now
        // A send reads the queue only at the limit, so up to maxInFlight + 1 ends are kept: no growth later.
        frameEnds.reserveCapacity(max(8, maxInFlight + 2))
    }

    /// Frames handed to the kernel that it may still hold (exact for payload readings, an upper bound otherwise).
    public var framesInKernel: Int { frameEnds.count }

    /// True when a motion frame may be handed to the kernel now.
    public var mayHandOverMotionFrame: Bool { frameEnds.count < max(1, maxInFlight) }

    /// Takes one reading of the kernel queue (`queued` bytes) at `now`; `pendingInCarbridge` says
    /// whether frames still wait to be written. A queue that shrank, or is empty with nothing
    /// waiting, is progress: it restarts the stall clock. Clears the hold (the caller decides again).
    public mutating func observe(queued: Int, at now: Instant, pendingInCarbridge: Bool) {
        if queued == 0 {
            frameEnds.removeAll(keepingCapacity: true)
        } else if readingsArePayload {
            // Payload readings tell which frames the kernel let go of: those ending before `delivered`.
            let delivered = bytesWritten - queued
            var gone = 0
            while gone < frameEnds.count, frameEnds[gone] <= delivered { gone += 1 }
            if gone > 0 { frameEnds.removeFirst(gone) }
        }
        if queued < queuedBytes || (queued == 0 && !pendingInCarbridge) { lastDrain = now }
        queuedBytes = queued
        isHolding = false
    }

    /// A motion frame stays in carbridge: `maxInFlight` frames are in the kernel.
    public mutating func hold() { isHolding = true }

    /// A write would have blocked: the kernel's buffer is full.
    public mutating func writeWouldBlock() { isWriteBlocked = true }

    /// `count` bytes went to the kernel at `now`; `completingFrame` when they ended a frame.
    public mutating func wrote(_ count: Int, completingFrame: Bool, at now: Instant) {
        // Bytes that had to wait for the kernel went out: the queue is moving. Or the queue was
        // empty: the bytes start waiting now, not when the queue last drained.
        if isWriteBlocked || queuedBytes == 0 { lastDrain = now }
        isWriteBlocked = false
        bytesWritten += count
        queuedBytes += count
        if completingFrame { frameEnds.append(bytesWritten) }
    }

    /// True when something waits (in the kernel or in carbridge) and the queue has not shrunk
    /// for `stallTimeout`: the link is down.
    public func isStalled(at now: Instant, pendingInCarbridge: Bool) -> Bool {
        guard queuedBytes > 0 || pendingInCarbridge else { return false }
        return now.nanoseconds &- lastDrain.nanoseconds >= stallTimeoutNanoseconds
    }

    /// True when nothing waits in carbridge and the queue (as last read, plus what was written since) is empty.
    public func isDrained(pendingInCarbridge: Bool) -> Bool { !pendingInCarbridge && queuedBytes == 0 }

    /// When to look at the queue again: soon while a frame is held (or bytes wait for a write
    /// that did not block), so it leaves within `heldRecheckInterval` of the queue having room —
    /// no signal tells when the car acknowledges, and the short rechecks last only while something
    /// is held; less often while the kernel holds bytes (stall detection) or someone waits for a
    /// flush; nil when everything has drained (no wake-ups on an idle link). Always later than `now`.
    public func nextCheck(at now: Instant, pendingInCarbridge: Bool, flushWaiting: Bool) -> Instant? {
        if isHolding || (pendingInCarbridge && !isWriteBlocked) {
            return Instant(nanoseconds: now.nanoseconds &+ heldRecheckNanoseconds)
        }
        guard pendingInCarbridge || queuedBytes > 0 || flushWaiting else { return nil }
        let recheck = Instant(nanoseconds: now.nanoseconds &+ queueRecheckNanoseconds)
        let stallAt = Instant(nanoseconds: lastDrain.nanoseconds &+ stallTimeoutNanoseconds)
        // The stall's instant while it is ahead. Once it has come the caller has decided (a stall closes an up
        // link; a shutdown's flush lets its window decide): looking again at `now` would fire in the same pass
        // over the due timers, whose clock does not move, for ever.
        let next = stallAt > now ? min(recheck, stallAt) : recheck
        return flushWaiting ? min(next, Instant(nanoseconds: now.nanoseconds &+ flushRecheckNanoseconds)) : next
    }
}
