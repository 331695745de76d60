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

    /// The device each entry picks among `devices` (a device fills at most one entry).
    public func assignments(among devices: [InputDeviceDescriptor]) -> [(entry: Entry, device: InputDeviceDescriptor)] {
        var taken = Set<String>()
        var result: [(entry: Entry, device: InputDeviceDescriptor)] = []
        for entry in entries {
            guard let match = entry.match else { continue }
            let free = devices.filter { !taken.contains($0.syspath) }
            if let device = DeviceSelector.select(match, role: entry.role, among: free) {
                taken.insert(device.syspath)
                result.append((entry, device))
            }
        }
        return result
    }

    /// For `carbridge devices`: syspath → the config keys that would pick it.
    public func picks(among devices: [InputDeviceDescriptor]) -> [String: [String]] {
        var picks: [String: [String]] = [:]
        for (entry, device) in assignments(among: devices) {
            picks[device.syspath, default: []].append("\(entry.key) = \"\(entry.match.map(\.description) ?? "none")\"")
        }
        return picks
    }
}
