import DriveInputModel

/// The LED class devices that make one pad's coloured light, and the sysfs writes that show a colour on
/// them. Two kinds are generic enough to drive: one multicolor LED (hid-playstation's DualSense lightbar,
/// `inputN:rgb:indicator`: `multi_intensity` per channel, then `brightness`) and three single-colour LEDs
/// named by colour (hid-sony's DualShock 4, `<hid>:red`, `:green`, `:blue`, each with its own `brightness`,
/// and `:global`, a master switch). Pure: the writes are worked out here, `PadSysfsWorker` performs them.
public enum PadLightFiles: Hashable, Sendable {
    /// One LED class device: its directory and `max_brightness`.
    public struct LED: Hashable, Sendable {
        /// `/sys/…/leds/input7:rgb:indicator`.
        public var directory: String
        /// Its `max_brightness` (at least 1).
        public var maxBrightness: Int

        /// Creates an LED.
        public init(directory: String, maxBrightness: Int) {
            self.directory = directory
            self.maxBrightness = max(1, maxBrightness)
        }

        /// `directory/brightness`.
        public var brightnessFile: String { directory + "/brightness" }
    }

    /// A multicolor LED whose `multi_index` lists `channels` (`red`, `green`, `blue`, in the kernel's order).
    case multicolor(LED, channels: [String])
    /// Three single-colour LEDs and the pad's master switch, if it has one.
    case separate(red: LED, green: LED, blue: LED, global: LED?)

    /// One write: `text` into `path`.
    public struct Write: Hashable, Sendable {
        public var path: String
        public var text: String

        /// Creates a write.
        public init(path: String, text: String) {
            self.path = path
            self.text = text
        }
    }

    /// Every file a colour is written to, in the order they are written (and restored).
    public var files: [String] {
        switch self {
        case .multicolor(let led, _):
            return [led.directory + "/multi_intensity", led.brightnessFile]
        case .separate(let red, let green, let blue, let global):
            return [red.brightnessFile, green.brightnessFile, blue.brightnessFile] + (global.map { [$0.brightnessFile] } ?? [])
        }
    }

    /// The writes that show `colour`, in order. A multicolor LED takes every channel's intensity first (0…its
    /// `max_brightness`, so the kernel's colour is exactly the one asked for), then its full `brightness`,
    /// which makes the kernel send it to the pad; single-colour LEDs take each channel scaled to their own
    /// `max_brightness`. The master switch is turned on only when `globalOff` (it was off when the pad
    /// opened): a pad whose lights someone switched off would show nothing otherwise.
    public func writes(for colour: LightColour, globalOff: Bool = false) -> [Write] {
        switch self {
        case .multicolor(let led, let channels):
            let intensities = channels.map { channel -> String in
                switch channel {
                case "red": return String(Self.scale(colour.red, to: led.maxBrightness))
                case "green": return String(Self.scale(colour.green, to: led.maxBrightness))
                case "blue": return String(Self.scale(colour.blue, to: led.maxBrightness))
                default: return "0"
                }
            }
            return [
                Write(path: led.directory + "/multi_intensity", text: intensities.joined(separator: " ")),
                Write(path: led.brightnessFile, text: String(led.maxBrightness)),
            ]
        case .separate(let red, let green, let blue, let global):
            var writes = [
                Write(path: red.brightnessFile, text: String(Self.scale(colour.red, to: red.maxBrightness))),
                Write(path: green.brightnessFile, text: String(Self.scale(colour.green, to: green.maxBrightness))),
                Write(path: blue.brightnessFile, text: String(Self.scale(colour.blue, to: blue.maxBrightness))),
            ]
            if let global, globalOff { writes.append(Write(path: global.brightnessFile, text: String(global.maxBrightness))) }
            return writes
        }
    }

    /// The master switch's `brightness` file, if the pad has one.
    public var globalFile: String? {
        if case .separate(_, _, _, let global?) = self { return global.brightnessFile }
        return nil
    }

    /// `value` (0…255) on a 0…`maximum` scale, rounded.
    static func scale(_ value: UInt8, to maximum: Int) -> Int {
        (Int(value) * maximum + 127) / 255
    }

    /// In words, for the log: `multicolor input7:rgb:indicator`, `red/green/blue 0003:054C:05C4.0003:red, …`.
    public var summary: String {
        func name(_ led: LED) -> String { String(led.directory.split(separator: "/").last ?? "") }
        switch self {
        case .multicolor(let led, _): return "multicolor \(name(led))"
        case .separate(let red, _, _, _): return "red/green/blue \(name(red)), …"
        }
    }
}
