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

    /// Decodes every complete record in `bytes` (after any buffered partial record).
    public mutating func decode(_ bytes: UnsafeRawBufferPointer) -> [InputEvent] {
        var events: [InputEvent] = []
        var offset = 0
        let size = Self.recordSize
        if !partial.isEmpty {
            let needed = size - partial.count
            let take = min(needed, bytes.count)
            partial.append(contentsOf: bytes[0..<take])
            offset = take
            if partial.count < size { return [] }
            partial.withUnsafeBytes { events.append(Self.event(from: $0, at: 0)) }
            partial.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= size {
            events.append(Self.event(from: bytes, at: offset))
            offset += size
        }
        if offset < bytes.count { partial.append(contentsOf: bytes[offset...]) }
        return events
    }

    /// Decodes every complete record in `bytes`.
    public mutating func decode(_ bytes: [UInt8]) -> [InputEvent] {
        bytes.withUnsafeBytes { decode($0) }
    }

    /// Forgets a buffered partial record.
    public mutating func reset() { partial.removeAll() }

    private static func event(from bytes: UnsafeRawBufferPointer, at offset: Int) -> InputEvent {
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: input_event.self)
        return InputEvent(
            seconds: Int64(raw.time.tv_sec), microseconds: Int64(raw.time.tv_usec),
            type: raw.type, code: raw.code, value: raw.value)
    }

    /// The kernel bytes of `event` (for writing into pipes in tests and replays).
    public static func encode(_ event: InputEvent) -> [UInt8] {
        var raw = input_event()
        raw.time.tv_sec = Int(event.seconds)
        raw.time.tv_usec = Int(event.microseconds)
        raw.type = event.type
        raw.code = event.code
        raw.value = event.value
        return withUnsafeBytes(of: &raw) { Array($0) }
    }

    /// The kernel bytes of several events, back to back.
    public static func encode(_ events: [InputEvent]) -> [UInt8] {
        events.flatMap { encode($0) }
    }
}
