/// How a config entry (`[devices]`) picks a device. Never by `eventN` (it changes on every replug).
public enum DeviceMatch: Hashable, Sendable, CustomStringConvertible {
    /// The first device of the right class.
    case auto
    /// No device (`"none"`).
    case none
    /// A name glob (`*` any run, `?` one character, `[…]` a set), e.g. `*X-Box*`.
    case nameGlob(String)
    /// A USB/Bluetooth id pair, e.g. `045e:028e`.
    case vendorProduct(vendor: UInt16, product: UInt16)
    /// A udev syspath (`/sys/devices/…`) or `ID_PATH` (`pci-0000:00:14.0-usb-0:2:1.0`).
    case udevPath(String)
    /// The input device's unique id (`uniq`), compared without case: a Bluetooth pad's address
    /// (`e4:17:d8:3a:9c:01`), or a USB device's serial number. Stored lower-case.
    case unique(String)

    /// Reads a matcher: `auto` (also an empty text); `none`; `vvvv:pppp` in hex; a Bluetooth address
    /// (`XX:XX:XX:XX:XX:XX`) or `uniq:…` (also `address:…`); `/sys/…` or `path:…` or a udev `ID_PATH`
    /// (`pci-…`, `platform-…`, `acpi-…`, `usb-…`); `name:GLOB`; anything else is a name glob.
    public init(parsing text: String) {
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty || trimmed.lowercased() == "auto" { self = .auto; return }
        if trimmed.lowercased() == "none" { self = .none; return }
        if let ids = Self.parseVendorProduct(trimmed) {
            self = .vendorProduct(vendor: ids.vendor, product: ids.product)
            return
        }
        if Self.isBluetoothAddress(trimmed) { self = .unique(trimmed.lowercased()); return }
        for prefix in ["uniq:", "address:"] where trimmed.hasPrefix(prefix) {
            self = .unique(String(trimmed.dropFirst(prefix.count)).trimmingWhitespace().lowercased())
            return
        }
        if trimmed.hasPrefix("name:") { self = .nameGlob(String(trimmed.dropFirst(5))); return }
        if trimmed.hasPrefix("path:") { self = .udevPath(String(trimmed.dropFirst(5))); return }
        if trimmed.hasPrefix("/sys/") || trimmed.hasPrefix("/devices/") { self = .udevPath(trimmed); return }
        for prefix in ["pci-", "platform-", "acpi-", "usb-"] where trimmed.hasPrefix(prefix) && !trimmed.contains(" ") {
            self = .udevPath(trimmed)
            return
        }
        self = .nameGlob(trimmed)
    }

    /// `vvvv:pppp` (exactly four hex digits each) as numbers.
    public static func parseVendorProduct(_ text: String) -> (vendor: UInt16, product: UInt16)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 4 }),
            let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16)
        else { return nil }
        return (vendor, product)
    }

    /// True for six colon-separated pairs of hex digits (`e4:17:d8:3a:9c:01`), how the kernel reports a
    /// Bluetooth input device's `uniq`.
    public static func isBluetoothAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.utf8.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// `045e:028e`-style text.
    public static func vendorProductText(vendor: UInt16, product: UInt16) -> String {
        func hex(_ value: UInt16) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        return "\(hex(vendor)):\(hex(product))"
    }

    /// The config spelling that reads back as this matcher (`auto`, `none`, `*X-Box*`, `name:none`, `045e:028e`, …).
    public var configValue: String {
        let plain: String
        switch self {
        case .auto: return "auto"
        case .none: return "none"
        case .vendorProduct(let vendor, let product): return Self.vendorProductText(vendor: vendor, product: product)
        case .nameGlob(let glob): plain = glob
        case .udevPath(let path): plain = path
        case .unique(let value): return Self.isBluetoothAddress(value) ? value : "uniq:" + value
        }
        if DeviceMatch(parsing: plain) == self { return plain }
        if case .nameGlob = self { return "name:" + plain }
        return "path:" + plain
    }

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .none: return "none"
        case .nameGlob(let glob): return "name \"\(glob)\""
        case .vendorProduct(let vendor, let product): return Self.vendorProductText(vendor: vendor, product: product)
        case .udevPath(let path): return "path \(path)"
        case .unique(let value): return Self.isBluetoothAddress(value) ? "address \(value)" : "uniq \"\(value)\""
        }
    }
}

extension String {
    /// The text without leading and trailing whitespace (no Foundation).
    public func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
