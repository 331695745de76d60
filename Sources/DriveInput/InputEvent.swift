import CLinux

/// One kernel input event (`struct input_event`): its kernel timestamp, type, code and value.
public struct InputEvent: Hashable, Sendable, CustomStringConvertible {
    /// Seconds part of the kernel timestamp.
    public var seconds: Int64
    /// Microseconds part of the kernel timestamp (0…999 999).
    public var microseconds: Int64
    /// The event type (`EV_SYN` = 0, `EV_KEY` = 1, `EV_ABS` = 3, …).
    public var type: UInt16
    /// The code within the type (`SYN_REPORT`, `BTN_SOUTH`, `ABS_X`, …).
    public var code: UInt16
    /// The value (key: 0 up, 1 down, 2 autorepeat; axis: the raw position).
    public var value: Int32

    /// Creates an event.
    public init(seconds: Int64 = 0, microseconds: Int64 = 0, type: UInt16, code: UInt16, value: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
        self.type = type
        self.code = code
        self.value = value
    }

    /// The timestamp in microseconds.
    public var timeMicroseconds: Int64 { seconds &* 1_000_000 &+ microseconds }

    /// True for `EV_SYN`/`SYN_REPORT`, the end of one device frame.
    public var isSynReport: Bool { type == EvdevCode.evSyn && code == EvdevCode.synReport }

    /// True for `EV_SYN`/`SYN_DROPPED`: the kernel buffer overflowed and events were lost.
    public var isSynDropped: Bool { type == EvdevCode.evSyn && code == EvdevCode.synDropped }

    public var description: String { "\(seconds).\(microseconds) \(type) \(code) \(value)" }
}

extension InputEvent {
    /// The event a kernel `struct input_event` record holds (libevdev's, or raw bytes from an fd).
    init(kernel raw: input_event) {
        self.init(
            seconds: Int64(raw.time.tv_sec), microseconds: Int64(raw.time.tv_usec),
            type: raw.type, code: raw.code, value: raw.value)
    }

    /// The kernel record of this event.
    var kernelRecord: input_event {
        var raw = input_event()
        raw.time.tv_sec = Int(seconds)
        raw.time.tv_usec = Int(microseconds)
        raw.type = type
        raw.code = code
        raw.value = value
        return raw
    }
}
