import DriveDBus
import DriveLink

/// One device's GATT services and characteristics as bluetoothd resolved them (`GattService1`,
/// `GattCharacteristic1` objects under the device's path in `GetManagedObjects`).
package struct GATTDatabase: Sendable {
    /// One `org.bluez.GattService1`.
    package struct Service: Hashable, Sendable {
        /// `/org/bluez/hci0/dev_…/service0015`.
        package var path: String
        /// Its UUID, lower-case 128-bit.
        package var uuid: String
    }

    /// One `org.bluez.GattCharacteristic1`.
    package struct Characteristic: Hashable, Sendable {
        /// `/org/bluez/hci0/dev_…/service0015/char0016`.
        package var path: String
        /// Its UUID, lower-case 128-bit.
        package var uuid: String
        /// The service it belongs to.
        package var servicePath: String
        /// `read`, `write`, `write-without-response`, `notify`, `indicate`, …
        package var flags: Set<String>
        /// The ATT MTU of the connection (BlueZ ≥ 5.62), nil when bluetoothd does not say.
        package var mtu: Int?

        /// A write request (with response) is allowed.
        package var canWriteWithResponse: Bool { flags.contains("write") }
        /// A write command (without response) is allowed.
        package var canWriteWithoutResponse: Bool { flags.contains("write-without-response") }
        /// The car can push values (notifications or indications).
        package var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    }

    /// The services, in path order.
    package var services: [Service] = []
    /// The characteristics, in path order.
    package var characteristics: [Characteristic] = []

    /// An empty database.
    package init() {}

    /// The services and characteristics under `devicePath` in a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    package init(managedObjects reply: [DBusValue], devicePath: String) {
        guard let objects = reply.first?.dictionary else { return }
        let prefix = devicePath + "/"
        for path in objects.keys.sorted() where path.hasPrefix(prefix) {
            guard let interfaces = objects[path]?.dictionary else { continue }
            if let properties = interfaces["org.bluez.GattService1"]?.dictionary,
               let uuid = properties["UUID"]?.string.flatMap(BLEUARTProfile.normalizedUUID) {
                services.append(Service(path: path, uuid: uuid))
            }
            if let properties = interfaces["org.bluez.GattCharacteristic1"]?.dictionary,
               let uuid = properties["UUID"]?.string.flatMap(BLEUARTProfile.normalizedUUID) {
                characteristics.append(Characteristic(
                    path: path, uuid: uuid,
                    servicePath: properties["Service"]?.string ?? BluetoothDevice.adapterPath(of: path),
                    flags: Set(properties["Flags"]?.strings ?? []), mtu: properties["MTU"]?.integer))
            }
        }
    }

    /// The endpoints of `profile` (nil: the first of `BLEUARTProfile.known` the device offers), or the
    /// sentence that says why there are none. `car` names the car in that sentence.
    package func uartEndpoints(profile: BLEUARTProfile?, car: String) -> Result<BLEUARTEndpoints, LinkFailure> {
        let offered = services.map(\.uuid)
        guard let chosen = profile ?? BLEUARTProfile.recognise(serviceUUIDs: offered),
              let service = services.first(where: { $0.uuid == chosen.service }) else {
            let list = offered.isEmpty ? "none" : offered.map(BLEUARTProfile.shortUUID).joined(separator: ", ")
            if let profile {
                return .failure(LinkFailure(
                    "\(car) has no GATT service \(BLEUARTProfile.shortUUID(profile.service)) ([link] ble_service; it offers: \(list))"))
            }
            return .failure(LinkFailure(
                "\(car) offers no known BLE serial service (HM-10 ffe0, Nordic UART 6e400001, Microchip 49535343-fe7d; it offers: \(list)): name its service and characteristics with [link] ble_service, ble_write and ble_notify"))
        }
        let own = characteristics.filter { $0.servicePath == service.path }
        guard let write = own.first(where: { $0.uuid == chosen.write }) else {
            return .failure(LinkFailure(
                "\(car)'s \(chosen.name) service has no characteristic \(BLEUARTProfile.shortUUID(chosen.write)) to write frames to (it has: \(Self.list(own)))"))
        }
        guard write.canWriteWithResponse || write.canWriteWithoutResponse else {
            return .failure(LinkFailure(
                "\(car)'s characteristic \(BLEUARTProfile.shortUUID(write.uuid)) cannot be written (flags: \(write.flags.sorted().joined(separator: ", ")))"))
        }
        let notify = own.first(where: { $0.uuid == chosen.notify && $0.canNotify })
        return .success(BLEUARTEndpoints(profile: chosen, write: write, notify: notify))
    }

    private static func list(_ characteristics: [Characteristic]) -> String {
        characteristics.isEmpty ? "none" : characteristics.map { BLEUARTProfile.shortUUID($0.uuid) }.joined(separator: ", ")
    }
}

/// Where a BLE car's frames go and its lines come from.
package struct BLEUARTEndpoints: Hashable, Sendable {
    /// The profile recognised (or configured).
    package var profile: BLEUARTProfile
    /// The characteristic frames are written to.
    package var write: GATTDatabase.Characteristic
    /// The characteristic the car notifies its lines on; nil when it has none that notifies.
    package var notify: GATTDatabase.Characteristic?
}
