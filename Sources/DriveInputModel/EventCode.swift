/// A kernel event code: evdev type (`EV_KEY`, `EV_ABS`, …) and code (`BTN_SOUTH`, `ABS_X`, …).
public struct EventCode: Hashable, Sendable, CustomStringConvertible {
    /// The evdev event type (`EV_KEY` = 1, `EV_ABS` = 3, …).
    public var type: UInt16
    /// The evdev event code within the type.
    public var code: UInt16

    /// Creates an event code.
    public init(type: UInt16, code: UInt16) {
        self.type = type
        self.code = code
    }

    public var description: String { "\(type):\(code)" }
}
