/// What kind of input device something is, as far as carbridge cares.
public enum DeviceClass: String, Hashable, Sendable, CaseIterable {
    /// A gamepad or joystick (`ID_INPUT_JOYSTICK`, `BTN_GAMEPAD`/`BTN_SOUTH`).
    case gamepad
    /// An evdev accelerometer (`ID_INPUT_ACCELEROMETER`, `INPUT_PROP_ACCELEROMETER`), e.g. a DualSense's motion sensors.
    case accelerometer
    /// An IIO accelerometer (`/sys/bus/iio/devices/iio:deviceN` with `in_accel_{x,y,z}_raw`).
    case iioAccelerometer
    /// A keyboard or keypad (`ID_INPUT_KEY`): arcade buttons and foot pedals are keyboards too.
    case keyboard
    /// A Wii Balance Board as `hid-wiimote` exposes it ("Nintendo Wii Remote Balance Board": four load
    /// cells on `ABS_HAT0X`…`ABS_HAT1Y`).
    case balanceBoard
    /// Anything else (mice, touchpads, power buttons, …).
    case other
}

/// One device udev reports (an `input` eventN node or an `iio` device): identity and where to find it.
public struct InputDeviceDescriptor: Hashable, Sendable {
    /// The class `DeviceClassifier` gave it.
    public var deviceClass: DeviceClass
    /// The device's name (the input device's `name`, or the IIO device's `name` attribute).
    public var name: String
    /// Vendor id, if known.
    public var vendor: UInt16?
    /// Product id, if known.
    public var product: UInt16?
    /// Bus type (`BUS_USB` = 3, `BUS_BLUETOOTH` = 5, …), if known.
    public var bustype: UInt16?
    /// `input` or `iio`.
    public var subsystem: String
    /// The udev syspath, e.g. `/sys/devices/…/input/input12/event7` (the identity while plugged in).
    public var syspath: String
    /// The device node (`/dev/input/event7`, `/dev/iio:device0`), if any.
    public var devnode: String?
    /// The udev `ID_PATH` (stable across replugs into the same port), if any.
    public var idPath: String?
    /// The input device's `uniq` (a Bluetooth pad's address, a USB device's serial number), if not empty.
    public var uniq: String?
    /// For IIO devices: the sysfs directory with the `in_accel_*` files.
    public var sysfsDirectory: String?
    /// The udev `ACCEL_MOUNT_MATRIX` property, if set.
    public var udevMountMatrix: String?
    /// All udev properties of the device.
    public var properties: [String: String]

    /// Creates a descriptor.
    public init(
        deviceClass: DeviceClass, name: String, vendor: UInt16? = nil, product: UInt16? = nil, bustype: UInt16? = nil,
        subsystem: String = "input", syspath: String, devnode: String? = nil, idPath: String? = nil,
        uniq: String? = nil, sysfsDirectory: String? = nil, udevMountMatrix: String? = nil, properties: [String: String] = [:]
    ) {
        self.deviceClass = deviceClass
        self.name = name
        self.vendor = vendor
        self.product = product
        self.bustype = bustype
        self.subsystem = subsystem
        self.syspath = syspath
        self.devnode = devnode
        self.idPath = idPath
        self.uniq = uniq
        self.sysfsDirectory = sysfsDirectory
        self.udevMountMatrix = udevMountMatrix
        self.properties = properties
    }

    /// The hardware device an evdev node belongs to: its syspath above `input/inputN/eventM` (a DualSense's or
    /// DualShock 4's HID device, whose driver makes the pad, its motion sensors and its touchpad under it);
    /// nil for any other shape (an IIO sensor).
    public var hardwareParent: String? {
        let parts = syspath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 3, parts[parts.count - 3] == "input", parts[parts.count - 2].hasPrefix("input"),
              parts[parts.count - 1].hasPrefix("event") else { return nil }
        return parts.dropLast(3).joined(separator: "/")
    }

    /// True when `other` is another node of the same hardware device (`hardwareParent`).
    public func isSibling(of other: InputDeviceDescriptor) -> Bool {
        guard let parent = hardwareParent else { return false }
        return syspath != other.syspath && parent == other.hardwareParent
    }

    /// `vendor:product` in lower-case hex (`045e:028e`), or nil when either is unknown.
    public var vendorProduct: String? {
        guard let vendor, let product else { return nil }
        return DeviceSelector.vendorProductText(vendor: vendor, product: product)
    }
}
