/// A key or button going down or up (`EV_KEY`; value 2 = autorepeat is dropped by readers).
public struct KeyChange: Hashable, Sendable {
    /// The `EV_KEY` code (`BTN_SOUTH` = 304, `KEY_SPACE` = 57, …).
    public var code: UInt16
    /// True when pressed.
    public var pressed: Bool

    /// Creates a key change.
    public init(code: UInt16, pressed: Bool) {
        self.code = code
        self.pressed = pressed
    }
}
