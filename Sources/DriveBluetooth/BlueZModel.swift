import DriveDBus
import DriveLink

/// The Serial Port Profile's service class, as BlueZ spells UUIDs.
package let serialPortUUID = "00001101-0000-1000-8000-00805f9b34fb"

/// One `org.bluez.Device1` as carbridge cares about it.
package struct BluetoothDevice: Hashable, Sendable {
    /// `/org/bluez/hci0/dev_98_D3_31_F5_2A_11`.
    package var path: String
    /// `/org/bluez/hci0`.
    package var adapterPath: String
    /// `98:D3:31:F5:2A:11`.
    package var address: String
    /// The name the device told (nil until bluetoothd has it; an HC-05 tells it only after the inquiry).
    package var name: String?
    /// The alias (the name unless the user set one; BlueZ makes it `98-D3-31-F5-2A-11` while there is no name).
    package var alias: String?
    package var rssi: Int?
    package var paired = false
    package var trusted = false
    package var connected = false
    /// Service UUIDs, lower-case 128-bit.
    package var uuids: [String] = []

    package init(path: String, adapterPath: String? = nil, address: String? = nil) {
        self.path = path
        self.adapterPath = adapterPath ?? BluetoothDevice.adapterPath(of: path)
        self.address = address ?? BluetoothDevice.address(fromPath: path) ?? ""
    }

    /// Updates from Device1 properties (`InterfacesAdded`, `PropertiesChanged`, `GetManagedObjects`).
    package mutating func apply(_ properties: [String: DBusValue]) {
        for (key, value) in properties {
            switch key {
            case "Address": if let v = value.string { address = v.uppercased() }
            case "Name": name = value.string
            case "Alias": alias = value.string
            case "RSSI": rssi = value.integer
            case "Paired": paired = value.bool ?? paired
            case "Trusted": trusted = value.bool ?? trusted
            case "Connected": connected = value.bool ?? connected
            case "UUIDs": uuids = (value.strings ?? []).map { $0.lowercased() }
            case "Adapter": if let v = value.string { adapterPath = v }
            default: break
            }
        }
    }

    /// The properties a `PropertiesChanged` invalidated.
    package mutating func invalidate(_ names: [String]) {
        for name in names where name == "RSSI" { rssi = nil }
    }

    /// True when it offers a Serial Port (UUID 0x1101).
    package var offersSerialPort: Bool { uuids.contains(serialPortUUID) }

    /// The name it is known by: its name, else a user-set alias, else nil.
    package var knownName: String? {
        if let name, !name.isEmpty { return name }
        if let alias, !alias.isEmpty, alias != address.replacingColons(with: "-") { return alias }
        return nil
    }

    /// `HC-05 (98:D3:31:F5:2A:11)` or just the address.
    package var label: String { knownName.map { "\($0) (\(address))" } ?? address }

    /// `/org/bluez/hci0/dev_AA_…` → `/org/bluez/hci0`.
    package static func adapterPath(of devicePath: String) -> String {
        guard let slash = devicePath.lastIndex(of: "/") else { return devicePath }
        return String(devicePath[..<slash])
    }

    /// `…/dev_AA_BB_CC_DD_EE_FF` → `AA:BB:CC:DD:EE:FF`.
    package static func address(fromPath path: String) -> String? {
        guard let range = path.ranges(of: "/dev_").last else { return nil }
        let text = path[range.upperBound...].replacing("_", with: ":").uppercased()
        return LinkURL.isBluetoothAddress(text) ? text : nil
    }

    /// The object path bluetoothd gives `address` under `adapterPath`.
    package static func path(adapterPath: String, address: String) -> String {
        adapterPath + "/dev_" + address.uppercased().replacingColons(with: "_")
    }
}

/// One `org.bluez.Adapter1`.
package struct BluetoothAdapter: Hashable, Sendable {
    package var path: String
    package var address: String = ""
    package var powered = false
    package var discovering = false
    /// BlueZ ≥ 5.64: `on`, `off`, `off-enabling`, `on-disabling`, `off-blocked` (rfkill).
    package var powerState: String?

    package init(path: String) { self.path = path }

    /// `hci0`.
    package var name: String { String(path.split(separator: "/").last ?? "") }

    package mutating func apply(_ properties: [String: DBusValue]) {
        for (key, value) in properties {
            switch key {
            case "Address": address = value.string ?? address
            case "Powered": powered = value.bool ?? powered
            case "Discovering": discovering = value.bool ?? discovering
            case "PowerState": powerState = value.string
            default: break
            }
        }
    }
}

/// What bluetoothd knows: adapters and devices, from `GetManagedObjects`.
package struct BlueZObjects: Sendable {
    package var adapters: [BluetoothAdapter] = []
    package var devices: [BluetoothDevice] = []

    package init(adapters: [BluetoothAdapter] = [], devices: [BluetoothDevice] = []) {
        self.adapters = adapters
        self.devices = devices
    }

    /// Parses the reply of `org.freedesktop.DBus.ObjectManager.GetManagedObjects` (`a{oa{sa{sv}}}`).
    package init(managedObjects reply: [DBusValue]) {
        guard let objects = reply.first?.dictionary else { return }
        for path in objects.keys.sorted() {
            guard let interfaces = objects[path]?.dictionary else { continue }
            if let properties = interfaces["org.bluez.Adapter1"]?.dictionary {
                var adapter = BluetoothAdapter(path: path)
                adapter.apply(properties)
                adapters.append(adapter)
            }
            if let properties = interfaces["org.bluez.Device1"]?.dictionary {
                var device = BluetoothDevice(path: path)
                device.apply(properties)
                devices.append(device)
            }
        }
    }

    /// The adapter named `name` (`hci1`), or the first one when nil.
    package func adapter(named name: String?) -> BluetoothAdapter? {
        guard let name else { return adapters.first }
        return adapters.first { $0.name == name || $0.address.uppercased() == name.uppercased() }
    }
}

/// Finds the device a user named (`HC-05`, an alias, or an address).
package enum DeviceResolver {
    /// The outcome.
    package enum Match: Equatable, Sendable {
        case none
        case one(BluetoothDevice)
        case several([BluetoothDevice])
    }

    /// Devices whose address, name or alias is `text`: exact (case-sensitive) matches first, else
    /// case-insensitive ones. With `preferPaired`, one paired device among several matches wins
    /// (the HC-05 you paired, not the neighbour's HC-05 that was merely discovered).
    package static func resolve(_ text: String, among devices: [BluetoothDevice], preferPaired: Bool = false) -> Match {
        // Spaces and tabs, not line breaks: Foundation's `.whitespaces`, which this trimmed before.
        let wanted = text.trimming { $0.isWhitespace && !$0.isNewline }
        if LinkURL.isBluetoothAddress(wanted.uppercased()) {
            let hits = devices.filter { $0.address == wanted.uppercased() }
            return finish(hits, preferPaired: preferPaired)
        }
        var hits = devices.filter { $0.name == wanted || $0.alias == wanted }
        if hits.isEmpty {
            let lower = wanted.lowercased()
            hits = devices.filter { $0.name?.lowercased() == lower || $0.alias?.lowercased() == lower }
        }
        return finish(hits, preferPaired: preferPaired)
    }

    private static func finish(_ hits: [BluetoothDevice], preferPaired: Bool) -> Match {
        // The same device under two adapters counts once per adapter: both are candidates.
        if hits.isEmpty { return .none }
        if hits.count == 1 { return .one(hits[0]) }
        if preferPaired {
            let paired = hits.filter(\.paired)
            if paired.count == 1 { return .one(paired[0]) }
        }
        return .several(hits.sorted { ($0.address, $0.path) < ($1.address, $1.path) })
    }

    /// One line per candidate: `98:D3:31:F5:2A:11 HC-05 on hci0, paired`.
    package static func candidateList(_ devices: [BluetoothDevice]) -> String {
        devices.map { device in
            var text = "\(device.address) \(device.knownName ?? "(no name)") on \(BluetoothAdapter(path: device.adapterPath).name)"
            if device.paired { text += ", paired" }
            return text
        }.joined(separator: "; ")
    }

    /// The sentence for a name nothing matched, listing what bluetoothd does know.
    package static func notFoundSentence(_ text: String, known: [BluetoothDevice]) -> String {
        let names = Set(known.compactMap(\.knownName)).sorted()
        var sentence = "no Bluetooth device named \"\(text)\" is paired or discovered: find it with `carbridge scan`, then `carbridge pair \(text)`"
        if !names.isEmpty { sentence += " (known: \(names.joined(separator: ", ")))" }
        return sentence
    }

    /// The sentence for an ambiguous name.
    package static func ambiguousSentence(_ text: String, candidates: [BluetoothDevice], use: String) -> String {
        "\"\(text)\" names \(candidates.count) devices: \(candidateList(candidates)); \(use)"
    }
}

extension String {
    func replacingColons(with replacement: String) -> String { replacing(":", with: replacement) }

    /// The text without the leading and trailing characters that `isTrimmed` picks.
    func trimming(while isTrimmed: (Character) -> Bool) -> String {
        var slice = Substring(self)
        while let first = slice.first, isTrimmed(first) { slice.removeFirst() }
        while let last = slice.last, isTrimmed(last) { slice.removeLast() }
        return String(slice)
    }
}
