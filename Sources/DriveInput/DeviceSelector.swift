import DriveInputModel
import Glibc

extension DeviceRole {
    /// The classes that can fill the role, best first; `auto` only takes the first.
    public var acceptedClasses: [DeviceClass] {
        switch self {
        case .gamepad: return [.gamepad, .keyboard, .other]
        case .accelerometer: return [.accelerometer, .iioAccelerometer]
        case .keyboard: return [.keyboard, .gamepad, .other]
        case .board: return [.balanceBoard]
        }
    }
}

/// Picks devices for config entries. Pure.
public enum DeviceSelector {
    /// Reads a config value (see `DeviceMatch(parsing:)`).
    public static func parse(_ text: String) -> DeviceMatch { DeviceMatch(parsing: text) }

    /// `vvvv:pppp` (exactly four hex digits each) as numbers.
    public static func parseVendorProduct(_ text: String) -> (vendor: UInt16, product: UInt16)? {
        DeviceMatch.parseVendorProduct(text)
    }

    /// `045e:028e`-style text.
    public static func vendorProductText(vendor: UInt16, product: UInt16) -> String {
        DeviceMatch.vendorProductText(vendor: vendor, product: product)
    }

    /// True when `match` names `device` (`auto` matches everything; the role decides the class).
    public static func matches(_ match: DeviceMatch, _ device: InputDeviceDescriptor) -> Bool {
        switch match {
        case .auto: return true
        case .none: return false
        case .nameGlob(let glob): return globMatches(glob, device.name)
        case .vendorProduct(let vendor, let product): return device.vendor == vendor && device.product == product
        case .unique(let value): return device.uniq.map { $0.lowercased() == value } ?? false
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
        if match == .none { return nil }
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
