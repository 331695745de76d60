/// The frames waiting to be written to the car, with the "no stale frames" rule (docs/protocol.md §5.6).
///
/// A motion frame replaces any motion frame that has not started to go out and joins the end of
/// the queue; `E` and F-key frames are appended in order and never dropped. A frame whose bytes
/// are partly written stays in flight until it is complete, so the car never sees half a frame
/// followed by another.
public struct FrameQueue: Sendable {
    private struct Entry: Sendable {
        let frame: Frame
        /// How many of `bytes` are this frame's (terminator included).
        let length: Int
    }

    /// How frames become bytes.
    public let encoder: FrameEncoder
    private var entries: [Entry] = []
    /// The bytes of every entry, back to back (the head's already written ones included). Encoded in
    /// place and reused, so queueing a frame allocates nothing once the buffers have their capacity.
    private var bytes: [UInt8] = []
    /// Bytes of `entries[0]` already written.
    private var writtenOfHead = 0
    /// How many motion frames a newer one replaced before they started to go out (over the queue's
    /// life, `clear()` included): the frames the car never saw because they waited.
    public private(set) var coalescedFrames = 0

    /// Creates an empty queue that encodes frames with `encoder`.
    public init(encoder: FrameEncoder) {
        self.encoder = encoder
        entries.reserveCapacity(8)
        bytes.reserveCapacity(256)
    }

    /// Queues `frame`: a motion frame replaces any pending motion frame that has not started.
    public mutating func push(_ frame: Frame) {
        if frame.isMotion {
            var end = bytes.count
            var index = entries.count - 1
            while index >= 0 {
                let start = end - entries[index].length
                let inFlight = index == 0 && writtenOfHead > 0
                if entries[index].frame.isMotion && !inFlight {
                    bytes.removeSubrange(start..<end)
                    entries.remove(at: index)
                    coalescedFrames += 1
                }
                end = start
                index -= 1
            }
        }
        let length = encoder.encode(frame, into: &bytes)
        entries.append(Entry(frame: frame, length: length))
    }

    /// True while some bytes are waiting to be written.
    public var hasPendingBytes: Bool { !entries.isEmpty }

    /// The number of bytes waiting to be written.
    public var pendingByteCount: Int { bytes.count - writtenOfHead }

    /// The next waiting bytes, in order (the in-flight frame's rest first, then whole frames up to
    /// about `maximumChunkBytes`); write some and `consume` what was written.
    public func nextBytes() -> ArraySlice<UInt8> {
        guard let head = entries.first else { return [] }
        var end = head.length
        var total = head.length - writtenOfHead
        for entry in entries.dropFirst() {
            if total + entry.length > Self.maximumChunkBytes { break }
            total += entry.length
            end += entry.length
        }
        return bytes[writtenOfHead..<end]
    }

    /// The first waiting frame (it may be partly written: see `hasFrameInFlight`).
    public var head: Frame? { entries.first?.frame }

    /// The rest of the first waiting frame's bytes (empty when nothing waits).
    public func headBytes() -> ArraySlice<UInt8> {
        guard let head = entries.first else { return [] }
        return bytes[writtenOfHead..<head.length]
    }

    /// How many bytes `nextBytes()` gathers at most (beyond the first frame).
    public static let maximumChunkBytes = 4096

    /// Marks the first `count` waiting bytes as written; returns how many frames that completed.
    @discardableResult
    public mutating func consume(_ count: Int) -> Int {
        var remaining = max(0, count)
        var completed = 0
        var completedBytes = 0
        while remaining > 0, completed < entries.count {
            let length = entries[completed].length
            let left = length - writtenOfHead
            if remaining >= left {
                remaining -= left
                completedBytes += length
                writtenOfHead = 0
                completed += 1
            } else {
                writtenOfHead += remaining
                remaining = 0
            }
        }
        if completed == entries.count && completed > 0 {
            // Everything went out (the usual case: one frame per write): no shifting of what is left.
            entries.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
        } else if completed > 0 {
            entries.removeSubrange(0..<completed)
            bytes.removeSubrange(0..<completedBytes)
        }
        return completed
    }

    /// Drops everything (the link was lost; nothing stale may go out after a reconnect).
    public mutating func clear() {
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        writtenOfHead = 0
    }

    /// The frames not yet completely written, oldest first (the in-flight one included).
    public var pendingFrames: [Frame] { entries.map(\.frame) }

    /// True when the first frame has been partly written.
    public var hasFrameInFlight: Bool { writtenOfHead > 0 }
}
