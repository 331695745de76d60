import CLinux

/// Turns raw kernel `struct input_event` bytes into `InputEvent`s, keeping a partial record
/// between reads (a pipe or a replay may split a record anywhere).
public struct InputEventDecoder {
    /// Size of one kernel `struct input_event` on this architecture (24 on x86_64/aarch64).
    public static let recordSize = MemoryLayout<input_event>.size

    private var partial: [UInt8] = []

    /// Creates a decoder with nothing buffered.
    public init() {}

    /// Bytes of an incomplete record waiting for the rest.
    public var pendingByteCount: Int { partial.count }

    /// Calls `body` with every complete record in `bytes` (after any buffered partial record), in order,
    /// without building an array. `body` returns false to stop: the rest of `bytes` is dropped (its
    /// reader was closed).
    public mutating func decode(_ bytes: UnsafeRawBufferPointer, while body: (InputEvent) -> Bool) {
        var offset = 0
        let size = Self.recordSize
        if !partial.isEmpty {
            let needed = size - partial.count
            let take = min(needed, bytes.count)
            partial.append(contentsOf: bytes[0..<take])
            offset = take
            if partial.count < size { return }
            let event = partial.withUnsafeBytes { Self.event(from: $0, at: 0) }
            partial.removeAll(keepingCapacity: true)
            guard body(event) else { return }
        }
        while bytes.count - offset >= size {
            let event = Self.event(from: bytes, at: offset)
            offset += size
            guard body(event) else { return }
        }
        if offset < bytes.count { partial.append(contentsOf: bytes[offset...]) }
    }

    /// Forgets a buffered partial record.
    public mutating func reset() { partial.removeAll() }

    private static func event(from bytes: UnsafeRawBufferPointer, at offset: Int) -> InputEvent {
        InputEvent(kernel: bytes.loadUnaligned(fromByteOffset: offset, as: input_event.self))
    }

    /// The kernel bytes of `event` (for writing into pipes in tests and replays).
    public static func encode(_ event: InputEvent) -> [UInt8] {
        withUnsafeBytes(of: event.kernelRecord) { Array($0) }
    }

    /// The kernel bytes of several events, back to back.
    public static func encode(_ events: [InputEvent]) -> [UInt8] {
        events.flatMap { encode($0) }
    }
}
