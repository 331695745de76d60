import Glibc

/// What a pad has in sysfs besides its evdev node: its coloured light and its battery, found from the node.
///
/// The kernel's layout (docs/input.md, "Pad lights and battery"): `/sys/class/input/eventN/device` is the
/// input device (`…/input/input7`), whose `device` link is its parent, the HID device (or a USB interface).
/// A HID driver hangs the pad's LEDs and battery on that parent (`<hid>/leds/…`, `<hid>/power_supply/…`);
/// LEDs hung on the input device itself (`input7/input7::capslock`, made by input-leds for a keyboard's lock
/// lights) are looked at too, but the lock lights are never taken.
public struct PadSysfs: Hashable, Sendable {
    /// The input device's directory (resolved).
    public var inputDirectory: String
    /// The pad's coloured light, if it has one carbridge can drive.
    public var lights: PadLightFiles?
    /// The pad's battery (`<hid>/power_supply/NAME`), if it reports one.
    public var battery: String?

    /// Creates a description.
    public init(inputDirectory: String, lights: PadLightFiles? = nil, battery: String? = nil) {
        self.inputDirectory = inputDirectory
        self.lights = lights
        self.battery = battery
    }

    /// The input-leds functions (drivers/input/input-leds.c): a keyboard's lights, never a pad's status light.
    static let keyboardFunctions: Set<String> = [
        "numlock", "capslock", "scrolllock", "compose", "kana", "sleep", "suspend", "mute", "misc", "mail", "charging",
    ]

    /// What the pad behind `eventNode` (`/dev/input/event4`) has, under `sysfsRoot`; nil when the node has
    /// no input device there. Reads sysfs (links, directories, small files): not on an event loop's thread.
    public static func find(eventNode: String, sysfsRoot: String = "/sys") -> PadSysfs? {
        let node = resolved(eventNode) ?? eventNode
        guard let name = node.split(separator: "/").last, name.hasPrefix("event"),
              let input = resolved("\(sysfsRoot)/class/input/\(name)/device")
        else { return nil }
        var found = PadSysfs(inputDirectory: input)
        var leds: [String] = []
        let parent = resolved(input + "/device")
        if let parent {
            leds += (SysfsFile.directoryEntries(parent + "/leds") ?? []).map { "\(parent)/leds/\($0)" }
        }
        // LEDs whose parent is the input device sit right in its directory (a class device under a class device).
        leds += (SysfsFile.directoryEntries(input) ?? []).filter { $0.contains(":") }.map { "\(input)/\($0)" }
        found.lights = lights(among: leds.filter { SysfsFile.exists($0 + "/brightness") && !isKeyboardLight($0) })
        if let parent { found.battery = battery(in: parent + "/power_supply") }
        return found
    }

    /// True for an input-leds lock light (`input3::capslock`).
    static func isKeyboardLight(_ directory: String) -> Bool {
        let name = directory.split(separator: "/").last ?? ""
        guard let function = name.split(separator: ":", omittingEmptySubsequences: false).last else { return false }
        return keyboardFunctions.contains(String(function))
    }

    /// The light among the LED directories `leds`: a multicolor LED with red, green and blue channels (an
    /// `:rgb:` one first), else three LEDs named alike but for their colour (`…:red`, `…:green`, `…:blue`),
    /// with the `…:global` of the same name as the master switch; nil when neither is there.
    static func lights(among leds: [String]) -> PadLightFiles? {
        let sorted = leds.sorted()
        let multicolor = sorted.compactMap { directory -> (String, [String])? in
            guard let index = SysfsFile.readText(directory + "/multi_index"), SysfsFile.exists(directory + "/multi_intensity")
            else { return nil }
            let channels = index.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
            guard Set(["red", "green", "blue"]).isSubset(of: Set(channels)) else { return nil }
            return (directory, channels)
        }
        if let (directory, channels) = multicolor.first(where: { $0.0.contains(":rgb:") }) ?? multicolor.first {
            return .multicolor(led(directory), channels: channels)
        }
        // The same name with the colour's part replaced: `0003:054C:05C4.0003:*`.
        var groups: [String: [String: String]] = [:]
        for directory in sorted {
            let name = String(directory.split(separator: "/").last ?? "")
            var parts = name.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard let index = parts.lastIndex(where: { ["red", "green", "blue", "global"].contains($0) }) else { continue }
            let colour = parts[index]
            parts[index] = "*"
            groups[parts.joined(separator: ":"), default: [:]][colour] = directory
        }
        for key in groups.keys.sorted() {
            guard let group = groups[key], let red = group["red"], let green = group["green"], let blue = group["blue"] else { continue }
            return .separate(red: led(red), green: led(green), blue: led(blue), global: group["global"].map(led))
        }
        return nil
    }

    /// The first battery in `directory` (a `power_supply` directory): one with a `capacity`, whose `scope`
    /// (if any) is not `System` (a pad's own battery says `Device`).
    static func battery(in directory: String) -> String? {
        for name in SysfsFile.directoryEntries(directory) ?? [] {
            let supply = "\(directory)/\(name)"
            guard SysfsFile.exists(supply + "/capacity"), SysfsFile.readText(supply + "/scope") != "System" else { continue }
            return supply
        }
        return nil
    }

    private static func led(_ directory: String) -> PadLightFiles.LED {
        PadLightFiles.LED(directory: directory, maxBrightness: Int(SysfsFile.readText(directory + "/max_brightness") ?? "") ?? 255)
    }

    /// `path` with every link resolved, or nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
