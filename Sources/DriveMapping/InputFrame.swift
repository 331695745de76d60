import DriveCore

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

/// Looks up evdev code names (`BTN_SOUTH`, `KEY_SPACE`, `ABS_HAT0X`); libevdev backs it at run time.
public protocol EventCodeResolver {
    /// The code for `name`, or nil when no such name exists.
    func code(named name: String) -> EventCode?
    /// The name of a code, e.g. `BTN_SOUTH`, if it has one.
    func name(of code: EventCode) -> String?
    /// Every name the resolver knows (for "did you mean …" suggestions).
    var knownNames: [String] { get }
}

/// A three-component vector (an acceleration in m/s², a gravity direction).
public struct Vector3: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var z: Double

    /// Creates a vector.
    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// One axis value after normalisation with the device's absinfo.
public struct AxisValue: Hashable, Sendable {
    /// The `EV_ABS` code (`ABS_X` = 0, …).
    public var code: UInt16
    /// Normalised value: −1…1 for centred axes (sticks, hats), 0…1 for one-sided ones (triggers),
    /// with the device's flat region already taken as centre.
    public var value: Double
    /// The raw kernel value.
    public var raw: Int32

    /// Creates an axis value.
    public init(code: UInt16, value: Double, raw: Int32) {
        self.code = code
        self.value = value
        self.raw = raw
    }
}

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

/// Everything one device reported in one `SYN_REPORT` frame (or one IIO sample), normalised.
/// Devices produce these; mappers turn them into `Control`s.
public struct InputFrame: Hashable, Sendable {
    /// When the frame was read (CLOCK_MONOTONIC).
    public var time: Instant
    /// Axes whose value changed in this frame (after coalescing: the last value of each code).
    public var axes: [AxisValue]
    /// Key changes, in the order they happened.
    public var keys: [KeyChange]
    /// For accelerometers: the acceleration in m/s², after scale, offset and mount matrix.
    public var acceleration: Vector3?

    /// Creates a frame.
    public init(time: Instant, axes: [AxisValue] = [], keys: [KeyChange] = [], acceleration: Vector3? = nil) {
        self.time = time
        self.axes = axes
        self.keys = keys
        self.acceleration = acceleration
    }
}
