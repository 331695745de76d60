import DriveMapping
import Glibc

/// How a config entry picks a device. Never by `eventN` (it changes on every replug).
public enum DeviceMatch: Hashable, Sendable, CustomStringConvertible {
    /// The first device of the right class.
    case auto
    /// A name glob (`*` any run, `?` one character, `[…]` a set), e.g. `*X-Box*`.
    case nameGlob(String)
    /// A USB/Bluetooth id pair, e.g. `045e:028e`.
    case vendorProduct(vendor: UInt16, product: UInt16)
    /// A udev syspath (`/sys/devices/…`) or `ID_PATH` (`pci-0000:00:14.0-usb-0:2:1.0`).
    case udevPath(String)

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .nameGlob(let glob): return "name \"\(glob)\""
        case .vendorProduct(let vendor, let product):
            return DeviceSelector.vendorProductText(vendor: vendor, product: product)
        case .udevPath(let path): return "path \(path)"
        }
    }
}

extension DeviceRole {
    /// The classes that can fill the role, best first; `auto` only takes the first.
    public var acceptedClasses: [DeviceClass] {
        switch self {
        case .gamepad: return [.gamepad, .keyboard, .other]
        case .accelerometer: return [.accelerometer, .iioAccelerometer]
        case .keyboard: return [.keyboard, .gamepad, .other]
        }
    }
}

/// Picks devices for config entries. Pure.
public enum DeviceSelector {
    /// Reads a config value: `auto`; `vvvv:pppp` in hex; `/sys/…` or `path:…` or a udev `ID_PATH`
    /// (`pci-…`, `platform-…`, `acpi-…`, `usb-…`); `name:GLOB`; anything else is a name glob.
    public static func parse(_ text: String) -> DeviceMatch {
        let trimmed = text.trimmingSpaces()
        if trimmed.isEmpty || trimmed.lowercased() == "auto" { return .auto }
        if let ids = parseVendorProduct(trimmed) { return .vendorProduct(vendor: ids.vendor, product: ids.product) }
        if trimmed.hasPrefix("name:") { return .nameGlob(String(trimmed.dropFirst(5))) }
        if trimmed.hasPrefix("path:") { return .udevPath(String(trimmed.dropFirst(5))) }
        if trimmed.hasPrefix("/sys/") || trimmed.hasPrefix("/devices/") { return .udevPath(trimmed) }
        for prefix in ["pci-", "platform-", "acpi-", "usb-"] where trimmed.hasPrefix(prefix) && !trimmed.contains(" ") {
            return .udevPath(trimmed)
        }
        return .nameGlob(trimmed)
    }

    /// `vvvv:pppp` (exactly four hex digits each) as numbers.
    public static func parseVendorProduct(_ text: String) -> (vendor: UInt16, product: UInt16)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 4 }),
            let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16)
        else { return nil }
        return (vendor, product)
    }

    /// `045e:028e`-style text.
    public static func vendorProductText(vendor: UInt16, product: UInt16) -> String {
        func hex(_ value: UInt16) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        return "\(hex(vendor)):\(hex(product))"
    }

    /// True when `match` names `device` (`auto` matches everything; the role decides the class).
    public static func matches(_ match: DeviceMatch, _ device: InputDeviceDescriptor) -> Bool {
        switch match {
        case .auto: return true
        case .nameGlob(let glob): return globMatches(glob, device.name)
        case .vendorProduct(let vendor, let product): return device.vendor == vendor && device.product == product
        case .udevPath(let path):
            let wanted = path.hasPrefix("/devices/") ? "/sys" + path : path
            if device.syspath == wanted || device.idPath == path { return true }
            // A syspath naming the parent input device (…/input/input12) matches its event node.
            return wanted.hasPrefix("/sys/") && device.syspath.hasPrefix(wanted + "/")
        }
    }

    /// The device `match` picks for `role` among `devices` (in their order): `auto` takes the first device of
    /// the role's first class (a gamepad; an evdev or IIO accelerometer for tilt; a keyboard); an explicit match
    /// takes the matching device of the most fitting class (a DualSense's `054c:0ce6` has a gamepad node and a
    /// motion-sensor node). Nil when nothing fits.
    public static func select(
        _ match: DeviceMatch, role: DeviceRole, among devices: [InputDeviceDescriptor]
    ) -> InputDeviceDescriptor? {
        if match == .auto {
            let autoClasses: [DeviceClass] = role == .accelerometer ? [.accelerometer, .iioAccelerometer] : [role.acceptedClasses[0]]
            return devices.first { autoClasses.contains($0.deviceClass) }
        }
        let candidates = devices.filter { matches(match, $0) }
        for deviceClass in role.acceptedClasses {
            if let found = candidates.first(where: { $0.deviceClass == deviceClass }) { return found }
        }
        return nil
    }

    /// fnmatch(3) glob matching (`*`, `?`, `[…]`), case-sensitive.
    public static func globMatches(_ glob: String, _ text: String) -> Bool {
        fnmatch(glob, text, 0) == 0
    }
}

extension String {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
