/// An element of SDL's standard gamepad layout, by its GameControllerDB name, and the evdev code of the
/// kernel's gamepad layout (Documentation/input/gamepad.rst, as xpad and hid-playstation report it)
/// that carbridge gives it, so that the default `[buttons]` table and `steering.axis_x = "ABS_X"` work
/// for any pad with a DB entry.
public enum StandardElement: String, Hashable, Sendable, CaseIterable {
    case a, b, x, y, back, guide, start, leftstick, rightstick, leftshoulder, rightshoulder
    case dpup, dpdown, dpleft, dpright
    case misc1, paddle1, paddle2, paddle3, paddle4, touchpad
    case leftx, lefty, rightx, righty, lefttrigger, righttrigger

    /// What the element becomes in the kernel's gamepad layout.
    public enum Target: Hashable, Sendable {
        /// An `EV_KEY` code.
        case key(UInt16)
        /// A full `EV_ABS` axis: centred (sticks) or one-sided (triggers).
        case axis(UInt16, oneSided: Bool)
        /// One direction of the first hat (`ABS_HAT0X`/`ABS_HAT0Y`, −1 or +1).
        case hatDirection(UInt16, positive: Bool)
    }

    /// The evdev target. SDL's `x` is the west face button and `y` the north one (as on an Xbox pad);
    /// the kernel's `BTN_WEST` is 0x134 and `BTN_NORTH` 0x133. A digital trigger (`lefttrigger:b6`)
    /// becomes `BTN_TL2`/`BTN_TR2` (see `digitalTarget`).
    public var target: Target {
        switch self {
        case .a: return .key(0x130)  // BTN_SOUTH
        case .b: return .key(0x131)  // BTN_EAST
        case .x: return .key(0x134)  // BTN_WEST
        case .y: return .key(0x133)  // BTN_NORTH
        case .back: return .key(0x13a)  // BTN_SELECT
        case .guide: return .key(0x13c)  // BTN_MODE
        case .start: return .key(0x13b)  // BTN_START
        case .leftstick: return .key(0x13d)  // BTN_THUMBL
        case .rightstick: return .key(0x13e)  // BTN_THUMBR
        case .leftshoulder: return .key(0x136)  // BTN_TL
        case .rightshoulder: return .key(0x137)  // BTN_TR
        case .dpup: return .hatDirection(0x11, positive: false)  // ABS_HAT0Y −1
        case .dpdown: return .hatDirection(0x11, positive: true)  // ABS_HAT0Y +1
        case .dpleft: return .hatDirection(0x10, positive: false)  // ABS_HAT0X −1
        case .dpright: return .hatDirection(0x10, positive: true)  // ABS_HAT0X +1
        case .misc1: return .key(0x2c0)  // BTN_TRIGGER_HAPPY1
        case .paddle1: return .key(0x2c1)
        case .paddle2: return .key(0x2c2)
        case .paddle3: return .key(0x2c3)
        case .paddle4: return .key(0x2c4)
        case .touchpad: return .key(0x14a)  // BTN_TOUCH
        case .leftx: return .axis(0x00, oneSided: false)  // ABS_X
        case .lefty: return .axis(0x01, oneSided: false)  // ABS_Y
        case .rightx: return .axis(0x03, oneSided: false)  // ABS_RX
        case .righty: return .axis(0x04, oneSided: false)  // ABS_RY
        case .lefttrigger: return .axis(0x02, oneSided: true)  // ABS_Z
        case .righttrigger: return .axis(0x05, oneSided: true)  // ABS_RZ
        }
    }

    /// For the triggers fed by a button: `BTN_TL2`/`BTN_TR2`.
    public var digitalTarget: UInt16? {
        switch self {
        case .lefttrigger: return 0x138
        case .righttrigger: return 0x139
        default: return nil
        }
    }

    /// The name `carbridge monitor` shows beside the raw code: SDL's, with the face buttons by position
    /// (`south`, `east`, `west`, `north`) since their letters differ between makers.
    public var displayName: String {
        switch self {
        case .a: return "south"
        case .b: return "east"
        case .x: return "west"
        case .y: return "north"
        default: return rawValue
        }
    }
}
