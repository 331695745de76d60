import DriveInputModel

/// One udev event of the `hid` subsystem: a HID device appearing, a driver taking it, or its removal.
public struct HidDeviceEvent: Hashable, Sendable {
    /// What happened (udev's action).
    public enum Action: String, Sendable {
        case add, bind, unbind, remove
    }

    public var action: Action
    /// `/sys/devices/…/0005:054C:05C4.0004`.
    public var syspath: String
    /// `HID_NAME`, e.g. "Wireless Controller".
    public var name: String
    /// The bus, vendor and product from `HID_ID` (`0005:0000054C:000005C4`); nil when it does not parse.
    public var bus: UInt16?
    public var vendor: UInt16?
    public var product: UInt16?
    /// `HID_UNIQ`: a Bluetooth device's address, a USB device's serial; nil when empty.
    public var uniq: String?
    /// `DRIVER`: the driver that took it, when udev says.
    public var driver: String?

    /// An event with these fields.
    public init(
        action: Action, syspath: String, name: String, bus: UInt16? = nil, vendor: UInt16? = nil,
        product: UInt16? = nil, uniq: String? = nil, driver: String? = nil
    ) {
        self.action = action
        self.syspath = syspath
        self.name = name
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.uniq = uniq
        self.driver = driver
    }

    /// The event udev's properties describe; nil for an action this watch does not follow.
    public init?(action: String, syspath: String, properties: [String: String]) {
        guard let action = Action(rawValue: action) else { return nil }
        self.action = action
        self.syspath = syspath
        name = properties["HID_NAME"] ?? String(syspath.split(separator: "/").last ?? "")
        let id = (properties["HID_ID"] ?? "").split(separator: ":").map { UInt32($0, radix: 16) }
        if id.count == 3, let bus = id[0], let vendor = id[1], let product = id[2] {
            self.bus = UInt16(truncatingIfNeeded: bus)
            self.vendor = UInt16(truncatingIfNeeded: vendor)
            self.product = UInt16(truncatingIfNeeded: product)
        }
        uniq = properties["HID_UNIQ"].flatMap { $0.isEmpty ? nil : $0 }
        driver = properties["DRIVER"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The device's kernel name, e.g. `0005:054C:05C4.0004`: how the kernel log names it.
    public var sysname: String { String(syspath.split(separator: "/").last ?? "") }

    /// "Wireless Controller" (054c:05c4, Bluetooth, a0:ab:51:00:00:09), as a warning names it.
    public var summary: String {
        var parts: [String] = []
        if let vendor, let product { parts.append(DeviceMatch.vendorProductText(vendor: vendor, product: product)) }
        switch bus {
        case 0x03: parts.append("USB")
        case 0x05: parts.append("Bluetooth")
        default: break
        }
        if let uniq { parts.append(uniq) }
        return "\"\(name)\"" + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
    }
}
