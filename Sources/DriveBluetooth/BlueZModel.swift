import DriveDBus
import DriveLink

/// The Serial Port Profile's service class, as BlueZ spells UUIDs.
package let serialPortUUID = "00001101-0000-1000-8000-00805f9b34fb"

/// The radios a device was met on: BR/EDR (classic: HC-05, RFCOMM) and LE (HM-10, GATT), both for a
/// dual-mode device, none while nothing tells.
package struct BluetoothTransports: OptionSet, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bluetooth Low Energy.
    package static let le = BluetoothTransports(rawValue: 1)
    /// Classic Bluetooth (Basic Rate / Enhanced Data Rate).
    package static let bredr = BluetoothTransports(rawValue: 2)

    /// `le`, `bredr`, `le+bredr` (dual mode) or `""` (unknown): bluetoothd's spelling of a transport.
    package var description: String {
        [(Self.le, "le"), (Self.bredr, "bredr")].filter { contains($0.0) }.map(\.1).joined(separator: "+")
    }
}

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
    /// The signal strength in dBm; nil when unknown (also for 127, HCI's "not available", as btvirt reports it).
    package var rssi: Int?
    /// `AddressType`: `public` or `random`. Only an LE device can have a random address; BR/EDR and dual-mode
    /// devices are `public`, as bluetoothd says for any device it met over BR/EDR.
    package var addressType: String?
    /// `Class`: the BR/EDR class of device (from the inquiry), which only a device met over BR/EDR has.
    package var deviceClass: UInt32?
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
            // 127 is HCI's "RSSI not available" (btvirt's, and some controllers' for a BR/EDR inquiry).
            case "RSSI": rssi = value.integer.flatMap { $0 == 127 ? nil : $0 }
            case "AddressType": addressType = value.string
            case "Class": deviceClass = value.integer.flatMap { UInt32(exactly: $0) }
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

    /// The BLE UART profile its services show (HM-10, Nordic UART, Microchip), or nil.
    package var bleProfile: BLEUARTProfile? { BLEUARTProfile.recognise(serviceUUIDs: uuids) }

    /// Whether it was met over LE, BR/EDR or both, as far as its properties tell. Device1 has no transport
    /// property, so it is inferred: a random address or a BLE UART service (a GATT service, found over LE)
    /// mean LE; a class of device (from a BR/EDR inquiry) or the Serial Port service (an SDP record, RFCOMM)
    /// mean BR/EDR; a dual-mode device may show both. A public address alone tells nothing (empty), so an
    /// LE module with a public address shows `le` only once its services are known.
    package var transports: BluetoothTransports {
        var found: BluetoothTransports = []
        if addressType == "random" || bleProfile != nil { found.insert(.le) }
        if deviceClass != nil || offersSerialPort { found.insert(.bredr) }
        return found
    }

    /// False only when what it is known to do excludes `wanted` (unknown transports pass: bluetoothd's
    /// discovery filter chose them). Empty `wanted` (auto) passes everything.
    package func matches(_ wanted: BluetoothTransports) -> Bool {
        wanted.isEmpty || transports.isEmpty || !transports.isDisjoint(with: wanted)
    }

    /// The name it is known by: its name, else a user-set alias, else nil.
    package var knownName: String? {
        if let name, !name.isEmpty { return name }
        if let alias, !alias.isEmpty, alias != address.replacingColons(with: "-") { return alias }
        return nil
    }

    /// The URL to drive it with when it is a BLE UART car, else nil: `ble://NAME`, or `ble://ADDRESS` when it
    /// has no name or another of `others` has the same name in any case (the link finds a car by its name).
    package func bleLinkURL(among others: [BluetoothDevice] = []) -> String? {
        guard bleProfile != nil else { return nil }
        let name = knownName
        let shared = name.map { name in
            others.contains { $0.address != address && $0.knownName?.lowercased() == name.lowercased() }
        } ?? false
        return BluetoothTool.bleLinkURL(address: address, name: name, nameIsShared: shared)
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

extension BLEUARTProfile {
    /// The profile as a scan line shows it: `HM-10 UART`, `Nordic UART`, `Microchip transparent UART`.
    package var uartLabel: String { name.hasSuffix("UART") ? name : name + " UART" }
}
