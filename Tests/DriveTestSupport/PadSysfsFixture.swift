import Foundation

/// A temporary sysfs tree laid out as the kernel lays out a pad's (measured on Debian 12's 6.1 kernel; docs/input.md,
/// "Pad lights and battery"): `class/input/eventN` → the event device inside its input device, whose `device` link
/// is the HID device, which holds `leds/` and `power_supply/`. Removed when released.
package final class PadSysfsFixture {
    /// The tree's root (what stands for `/sys`).
    package let root: String

    /// An empty tree.
    package init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-sysfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// A HID device at `hid` (below `devices/`) with the input device `input` and its event node `event`; returns
    /// the HID and input directories.
    @discardableResult
    package func addPad(hid: String, input: String, event: String, name: String = "pad") throws -> (hid: String, input: String) {
        let hidDirectory = "\(root)/devices/\(hid)"
        let inputDirectory = "\(hidDirectory)/input/\(input)"
        let eventDirectory = "\(inputDirectory)/\(event)"
        let manager = FileManager.default
        try manager.createDirectory(atPath: eventDirectory, withIntermediateDirectories: true)
        try manager.createDirectory(atPath: "\(root)/class/input", withIntermediateDirectories: true)
        try write("\(inputDirectory)/name", name)
        try manager.createSymbolicLink(atPath: "\(inputDirectory)/device", withDestinationPath: "../..")
        try manager.createSymbolicLink(atPath: "\(eventDirectory)/device", withDestinationPath: "../../\(input)")
        try manager.createSymbolicLink(
            atPath: "\(root)/class/input/\(event)", withDestinationPath: "../../devices/\(hid)/input/\(input)/\(event)")
        return (hidDirectory, inputDirectory)
    }

    /// An LED class device `name` in `directory` (a HID device's `leds/` is made), with `files`; returns its directory.
    @discardableResult
    package func addLED(in directory: String, name: String, files: [String: String]) throws -> String {
        let led = "\(directory)/\(name)"
        try FileManager.default.createDirectory(atPath: led, withIntermediateDirectories: true)
        for (file, text) in files { try write("\(led)/\(file)", text) }
        return led
    }

    /// A battery `name` in the HID device `hid`; returns its directory.
    @discardableResult
    package func addBattery(in hid: String, name: String, capacity: Int, status: String) throws -> String {
        let supply = "\(hid)/power_supply/\(name)"
        try FileManager.default.createDirectory(atPath: supply, withIntermediateDirectories: true)
        try write("\(supply)/capacity", "\(capacity)\n")
        try write("\(supply)/status", "\(status)\n")
        try write("\(supply)/type", "Battery\n")
        try write("\(supply)/scope", "Device\n")
        return supply
    }

    /// A DualSense on Bluetooth (hid-playstation): `event4` in `input7`, the lightbar `input7:rgb:indicator` (blue,
    /// as the driver leaves it), five player LEDs and the battery at `capacity`. Returns the HID directory.
    @discardableResult
    package func addDualSense(capacity: Int = 80, status: String = "Discharging") throws -> String {
        let (hid, _) = try addPad(
            hid: "virtual/misc/uhid/0005:054C:0CE6.0002", input: "input7", event: "event4", name: "DualSense Wireless Controller")
        try addPad(hid: "virtual/misc/uhid/0005:054C:0CE6.0002", input: "input8", event: "event5", name: "DualSense Motion Sensors")
        try addLED(in: hid + "/leds", name: "input7:rgb:indicator", files: [
            "brightness": "255\n", "max_brightness": "255\n", "multi_index": "red green blue\n",
            "multi_intensity": "0 0 255\n", "trigger": "[none]\n",
        ])
        for player in 1...5 {
            try addLED(in: hid + "/leds", name: "input7:white:player-\(player)", files: ["brightness": "0\n", "max_brightness": "1\n"])
        }
        try addBattery(in: hid, name: "ps-controller-battery-e4:17:d8:3a:9c:01", capacity: capacity, status: status)
        return hid
    }

    /// A DualShock 4 on USB (hid-sony): `event6` in `input10`, the LEDs `:red`, `:green`, `:blue` (0…`maximum`) and
    /// `:global` (0…1, `global`), and its battery. Returns the HID directory.
    @discardableResult
    package func addDualShock4(maximum: Int = 255, global: Int = 1) throws -> String {
        let id = "0003:054C:05C4.0003"
        let (hid, _) = try addPad(
            hid: "pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.3/\(id)", input: "input10", event: "event6",
            name: "Sony Interactive Entertainment Wireless Controller")
        for (colour, value) in [("red", 0), ("green", 0), ("blue", 64)] {
            try addLED(in: hid + "/leds", name: "\(id):\(colour)", files: ["brightness": "\(value)\n", "max_brightness": "\(maximum)\n"])
        }
        try addLED(in: hid + "/leds", name: "\(id):global", files: ["brightness": "\(global)\n", "max_brightness": "1\n"])
        try addBattery(in: hid, name: "sony_controller_battery_a4:53:85:0b:11:22", capacity: 60, status: "Charging")
        return hid
    }

    /// Writes `text` to `path` (replacing it).
    package func write(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// The text of `path` without its trailing newline; nil when it cannot be read.
    package func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8)).map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 }
    }

    /// Makes `path` refuse writes: mode 0444, or for root (whom modes do not stop) a link to a file whose kernel
    /// side takes no writes, `/proc/self/status` (still readable, as sysfs files are).
    package func makeUnwritable(_ path: String) throws {
        if getuid() == 0 {
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/proc/self/status")
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        }
    }
}
