import CLinux

/// Numeric evdev constants used by the readers (from `linux/input-event-codes.h`).
public enum EvdevCode {
    /// `EV_SYN`.
    public static let evSyn = UInt16(EV_SYN)
    /// `EV_KEY`.
    public static let evKey = UInt16(EV_KEY)
    /// `EV_REL`.
    public static let evRel = UInt16(EV_REL)
    /// `EV_ABS`.
    public static let evAbs = UInt16(EV_ABS)
    /// `EV_MSC`.
    public static let evMsc = UInt16(EV_MSC)
    /// `SYN_REPORT`.
    public static let synReport = UInt16(SYN_REPORT)
    /// `SYN_DROPPED`.
    public static let synDropped = UInt16(SYN_DROPPED)
    /// `ABS_X`.
    public static let absX = UInt16(ABS_X)
    /// `ABS_Y`.
    public static let absY = UInt16(ABS_Y)
    /// `ABS_Z`.
    public static let absZ = UInt16(ABS_Z)
    /// `ABS_RX`.
    public static let absRX = UInt16(ABS_RX)
    /// `ABS_RY`.
    public static let absRY = UInt16(ABS_RY)
    /// `ABS_RZ`.
    public static let absRZ = UInt16(ABS_RZ)
    /// `ABS_HAT0X`, the first hat axis.
    public static let absHat0X = UInt16(ABS_HAT0X)
    /// `ABS_HAT3Y`, the last hat axis.
    public static let absHat3Y = UInt16(ABS_HAT3Y)
    /// `ABS_MAX`.
    public static let absMax = UInt16(ABS_MAX)
    /// `KEY_MAX`.
    public static let keyMax = UInt16(KEY_MAX)
    /// `BTN_JOYSTICK` (0x120), the first joystick button.
    public static let btnJoystick = UInt16(BTN_JOYSTICK)
    /// `BTN_SOUTH` (= `BTN_GAMEPAD`, `BTN_A`, 0x130).
    public static let btnSouth = UInt16(BTN_SOUTH)
    /// `INPUT_PROP_ACCELEROMETER`.
    public static let propAccelerometer = UInt16(INPUT_PROP_ACCELEROMETER)
    /// Standard gravity in m/s², for evdev accelerometers whose resolution is in units per g.
    public static let standardGravity = 9.80665

    /// True for the hat axes `ABS_HAT0X`…`ABS_HAT3Y` (D-pads).
    public static func isHat(_ code: UInt16) -> Bool { code >= absHat0X && code <= absHat3Y }
}
