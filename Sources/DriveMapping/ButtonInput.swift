/// Something that can be pressed: a key/button (`EV_KEY`) or one direction of an axis (a hat).
public enum ButtonInput: Hashable, Sendable, CustomStringConvertible {
    /// An `EV_KEY` code (`BTN_SOUTH` = 304, `KEY_SPACE` = 57, …).
    case key(UInt16)
    /// One direction of an `EV_ABS` axis (`ABS_HAT0X-` …): pressed at value ≤ −0.5 (negative)
    /// or ≥ 0.5 (positive).
    case axisDirection(code: UInt16, positive: Bool)

    /// The value at or beyond which an axis direction counts as pressed.
    public static let axisPressThreshold = 0.5

    /// Whether an axis direction is pressed at normalised `value`.
    public static func isPressed(positive: Bool, value: Double) -> Bool {
        positive ? value >= axisPressThreshold : value <= -axisPressThreshold
    }

    public var description: String {
        switch self {
        case .key(let code): return "key \(code)"
        case .axisDirection(let code, let positive): return "axis \(code)\(positive ? "+" : "-")"
        }
    }
}
