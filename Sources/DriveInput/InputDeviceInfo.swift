/// What an evdev device says about itself: identity, properties, keys and axes.
public struct InputDeviceInfo: Hashable, Sendable {
    /// The kernel's device name, e.g. `Microsoft X-Box 360 pad`.
    public var name: String
    /// `BUS_USB` = 3, `BUS_BLUETOOTH` = 5, …
    public var bustype: UInt16
    /// USB/Bluetooth vendor id.
    public var vendor: UInt16
    /// USB/Bluetooth product id.
    public var product: UInt16
    /// Device version.
    public var version: UInt16
    /// Physical location (`usb-0000:00:14.0-2/input0`), if the driver sets one.
    public var phys: String?
    /// Unique id (a Bluetooth pad's MAC), if the driver sets one.
    public var uniq: String?
    /// `INPUT_PROP_*` bits the device has.
    public var properties: Set<UInt16>
    /// `EV_KEY` codes the device can send.
    public var keys: Set<UInt16>
    /// `EV_ABS` codes the device can send, with their absinfo.
    public var axes: [UInt16: AbsInfo]

    /// Creates a description.
    public init(
        name: String, bustype: UInt16 = 0, vendor: UInt16 = 0, product: UInt16 = 0, version: UInt16 = 0,
        phys: String? = nil, uniq: String? = nil, properties: Set<UInt16> = [], keys: Set<UInt16> = [],
        axes: [UInt16: AbsInfo] = [:]
    ) {
        self.name = name
        self.bustype = bustype
        self.vendor = vendor
        self.product = product
        self.version = version
        self.phys = phys
        self.uniq = uniq
        self.properties = properties
        self.keys = keys
        self.axes = axes
    }

    /// True when the device is an accelerometer (`INPUT_PROP_ACCELEROMETER`).
    public var isAccelerometer: Bool { properties.contains(EvdevCode.propAccelerometer) }

    /// True when the device has gamepad buttons (`BTN_GAMEPAD`/`BTN_SOUTH`).
    public var hasGamepadButtons: Bool { keys.contains(EvdevCode.btnSouth) }

    /// `vendor:product` in lower-case hex, e.g. `045e:028e`.
    public var vendorProduct: String { DeviceSelector.vendorProductText(vendor: vendor, product: product) }
}
