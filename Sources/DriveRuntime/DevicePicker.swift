import DriveConfig
import DriveInput
import DriveInputModel
import DriveMapping

/// Decides which devices drive, from the `[devices]` config: one gamepad, one accelerometer
/// (only when steering by tilt), one extra key device. Pure.
public struct DevicePicker: Sendable {
    /// One config entry: its key, the role it fills, and its matcher (nil = `none`).
    public struct Entry: Sendable {
        /// The config key, e.g. `devices.gamepad`.
        public var key: String
        /// What the device is wanted for.
        public var role: DeviceRole
        /// How it is matched; nil when the entry is `none`.
        public var match: DeviceMatch?
    }

    /// The entries in priority order.
    public let entries: [Entry]

    /// Builds the entries from a config.
    public init(config: CarbridgeConfig) {
        func match(_ match: DeviceMatch) -> DeviceMatch? { match == .none ? nil : match }
        var entries = [Entry(key: "devices.gamepad", role: .gamepad, match: match(config.devices.gamepad))]
        if config.usesAccelerometer {
            entries.append(Entry(key: "devices.accelerometer", role: .accelerometer, match: match(config.devices.accelerometer)))
        }
        if config.usesBoard {
            entries.append(Entry(key: "devices.board", role: .board, match: match(config.devices.board)))
        }
        entries.append(Entry(key: "devices.keyboard", role: .keyboard, match: match(config.devices.keyboard)))
        self.entries = entries
    }

    /// The device each entry picks among `devices` (a device fills at most one entry). An `auto` accelerometer
    /// is the picked pad's own motion sensors when it has them (`ownSensor`), else the first one.
    public func assignments(among devices: [InputDeviceDescriptor]) -> [(entry: Entry, device: InputDeviceDescriptor)] {
        var taken = Set<String>()
        var result: [(entry: Entry, device: InputDeviceDescriptor)] = []
        for entry in entries {
            guard let match = entry.match else { continue }
            let free = devices.filter { !taken.contains($0.syspath) }
            let pad = result.first { $0.entry.role == .gamepad }?.device
            let own = entry.role == .accelerometer && match == .auto ? pad.flatMap { Self.ownSensor(of: $0, among: free) } : nil
            if let device = own ?? DeviceSelector.select(match, role: entry.role, among: free) {
                taken.insert(device.syspath)
                result.append((entry, device))
            }
        }
        return result
    }

    /// The motion sensors the driver of `pad` made for it (a DualSense's or DualShock 4's "Motion Sensors"
    /// node: an accelerometer on the same hardware device), among `devices`.
    public static func ownSensor(of pad: InputDeviceDescriptor, among devices: [InputDeviceDescriptor]) -> InputDeviceDescriptor? {
        devices.first { $0.deviceClass == .accelerometer && $0.isSibling(of: pad) }
    }

    /// True when `entry` is an `auto` accelerometer, which gives way to the pad's own sensors when they appear.
    public static func followsThePad(_ entry: Entry) -> Bool { entry.role == .accelerometer && entry.match == .auto }

    /// For `carbridge devices`: syspath → the config keys that would pick it.
    public func picks(among devices: [InputDeviceDescriptor]) -> [String: [String]] {
        var picks: [String: [String]] = [:]
        for (entry, device) in assignments(among: devices) {
            picks[device.syspath, default: []].append("\(entry.key) = \"\(entry.match.map(\.description) ?? "none")\"")
        }
        return picks
    }
}
