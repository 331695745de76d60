// Raw evdev bytes (`struct input_event` records from a device fd): InputEventDecoder, fed whole and in
// pieces, must round-trip through encode; then EvdevFrameAssembler turns the events into frames.
import DriveCore
import DriveInput
import DriveMapping
import FuzzSupport

/// Axes with ordinary, degenerate and extreme ranges (codes ABS_X…ABS_RZ, a hat, ABS_MISC-ish 0x28).
private let axes: [UInt16: AbsInfo] = [
    0x00: AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
    0x01: AbsInfo(minimum: 0, maximum: 255, flat: 15),
    0x02: AbsInfo(minimum: 0, maximum: 1023, resolution: 4),
    0x03: AbsInfo(minimum: Int32.min, maximum: Int32.max, flat: Int32.max, resolution: -5),
    0x04: AbsInfo(minimum: 5, maximum: 5),
    0x05: AbsInfo(minimum: 10, maximum: -10, flat: -3),
    0x10: AbsInfo(minimum: -1, maximum: 1),
    0x28: AbsInfo(minimum: 0, maximum: 1, flat: 1),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInputEvents(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let recordSize = InputEventDecoder.recordSize

    var whole = InputEventDecoder()
    let events = whole.decodeAll(bytes)
    fuzzCheck(events.count == bytes.count / recordSize, "\(events.count) events from \(bytes.count) bytes")
    fuzzCheck(whole.pendingByteCount == bytes.count % recordSize, "pending \(whole.pendingByteCount)")
    let complete = Array(bytes.prefix(events.count * recordSize))
    fuzzCheck(InputEventDecoder.encode(events) == complete, "events do not round-trip to their bytes")

    var pieces = InputEventDecoder()
    var pieceEvents: [InputEvent] = []
    for chunk in fuzzChunks(bytes) { pieceEvents += pieces.decodeAll(Array(chunk)) }
    fuzzCheck(pieceEvents == events, "pieces and whole differ")
    pieces.reset()
    fuzzCheck(pieces.pendingByteCount == 0, "reset keeps bytes")

    // Frames: normalised axes in −1…1, finite acceleration, keys that change state in order.
    let isAccelerometer = (bytes.first ?? 0) & 1 == 1
    var assembler = EvdevFrameAssembler(
        absInfo: axes, isAccelerometer: isAccelerometer, keysDown: [0x130], knowsInitialAxisValues: true)
    if (bytes.first ?? 0) & 2 == 2 {
        assembler.stateSource = { EvdevStateSnapshot(keysDown: [0x131, 0x13B], axisValues: [0x00: -5, 0x02: 900]) }
    }
    var keysDown: Set<UInt16> = [0x130]
    var time = Instant.zero
    for event in events {
        time = time.advanced(by: .microseconds(100))
        guard let frame = assembler.feed(event, at: time) else { continue }
        fuzzCheck(frame.time == time, "frame time")
        for axis in frame.axes where axes[axis.code] != nil {
            fuzzCheck((-1...1).contains(axis.value), "axis \(axis.code) raw \(axis.raw) normalised to \(axis.value)")
        }
        if let a = frame.acceleration {
            fuzzCheck(a.x.isFinite && a.y.isFinite && a.z.isFinite, "acceleration \(a)")
        }
        for key in frame.keys {
            fuzzCheck(keysDown.contains(key.code) != key.pressed, "key \(key.code) pressed=\(key.pressed) twice")
            if key.pressed { keysDown.insert(key.code) } else { keysDown.remove(key.code) }
        }
        fuzzCheck(keysDown == assembler.keysDown, "keys down \(keysDown) vs assembler \(assembler.keysDown)")
    }
    let state = assembler.stateFrame(at: time)
    fuzzCheck(Set(state.keys.map(\.code)) == assembler.keysDown, "state frame keys")
    return 0
}

extension InputEventDecoder {
    /// Every complete record in `bytes`, collected into an array.
    fileprivate mutating func decodeAll(_ bytes: [UInt8]) -> [InputEvent] {
        var events: [InputEvent] = []
        bytes.withUnsafeBytes { raw in
            decode(raw) { event in
                events.append(event)
                return true
            }
        }
        return events
    }
}
