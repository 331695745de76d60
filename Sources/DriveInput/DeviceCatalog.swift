import Glibc
import DriveInputModel

/// One line of `carbridge devices`: a device and whether this user may read it.
public struct DeviceListing: Hashable, Sendable {
    /// The device.
    public var descriptor: InputDeviceDescriptor
    /// True when this process may read it (its node, or an IIO device's `in_accel_x_raw`).
    public var readable: Bool

    /// Creates a listing.
    public init(descriptor: InputDeviceDescriptor, readable: Bool) {
        self.descriptor = descriptor
        self.readable = readable
    }
}

/// Lists the input devices carbridge can see, and formats the list for `carbridge devices`.
public enum DeviceCatalog {
    /// Every input eventN and IIO device udev knows, with readability (`access(R_OK)`).
    public static func list() -> [DeviceListing] {
        UdevWatcher.enumerate().map { DeviceListing(descriptor: $0, readable: isReadable($0)) }
    }

    /// True when this process may read the device now.
    public static func isReadable(_ device: InputDeviceDescriptor) -> Bool {
        if device.subsystem == "iio", let directory = device.sysfsDirectory {
            return access(directory + "/in_accel_x_raw", R_OK) == 0
        }
        guard let node = device.devnode else { return false }
        return access(node, R_OK) == 0
    }

    /// The listing as text, one block per device: class, vendor:product, node, readable, name; then the
    /// syspath, `ID_PATH`, `uniq`, IIO directory, a pad's button layout (`layout`) and which config entries
    /// pick it (`pickedBy`). Pure.
    public static func format(
        _ listings: [DeviceListing], pickedBy: (InputDeviceDescriptor) -> [String] = { _ in [] },
        layout: (InputDeviceDescriptor) -> String? = { _ in nil }
    ) -> String {
        if listings.isEmpty {
            return "No input devices found: udev lists no input eventN or iio devices. Plug in a gamepad, or check that /sys and /dev/input exist (containers often have neither).\n"
        }
        var lines: [String] = []
        let readableCount = listings.filter(\.readable).count
        for listing in listings {
            let device = listing.descriptor
            let columns = [
                pad(device.deviceClass.rawValue, 17),
                pad(device.vendorProduct ?? "-", 10),
                pad(device.devnode ?? "-", 20),
                pad(listing.readable ? "readable" : "NOT readable", 13),
                "\"\(device.name)\"",
            ]
            lines.append(columns.joined(separator: " "))
            lines.append("    syspath \(device.syspath)")
            if let idPath = device.idPath { lines.append("    ID_PATH \(idPath)") }
            if let uniq = device.uniq {
                let hint = device.bustype == 5 && DeviceMatch.isBluetoothAddress(uniq) ? "  (Bluetooth address)" : ""
                lines.append("    uniq    \(uniq)\(hint)")
            }
            if let directory = device.sysfsDirectory { lines.append("    sysfs   \(directory)") }
            if let matrix = device.udevMountMatrix { lines.append("    ACCEL_MOUNT_MATRIX \(matrix)") }
            if let layout = layout(device) { lines.append("    layout  \(layout)") }
            let picks = pickedBy(device)
            if !picks.isEmpty { lines.append("    picked by \(picks.joined(separator: ", "))") }
        }
        if readableCount < listings.count {
            lines.append("")
            lines.append("Some devices are not readable: install udev/70-carbridge.rules (sudo cp udev/70-carbridge.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger), then replug.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
