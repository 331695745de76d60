import DriveBluetooth
import DriveDBus
import DriveLink
import XCTest

/// What `carbridge scan` (and `pair`) make of BLE cars from bluetoothd's Device1 properties: the transport
/// inferred, the UART profile recognised, the line, the `--le`/`--bredr` filter and the `ble://` URL.
final class BLEScanTests: XCTestCase {
    private let hm10Service = "0000ffe0-0000-1000-8000-00805f9b34fb"
    private let nordicService = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"

    /// A device as `GetManagedObjects` gives it, from Device1 properties.
    private func device(_ address: String, _ properties: [String: DBusValue]) -> BluetoothDevice {
        let path = BluetoothDevice.path(adapterPath: "/org/bluez/hci0", address: address)
        var all = properties
        all["Address"] = .string(address)
        all["Adapter"] = .objectPath("/org/bluez/hci0")
        let reply: [DBusValue] = [.array("{oa{sa{sv}}}", [
            .dictEntry(.objectPath(path), .array("{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .properties(all))])),
        ])]
        let objects = BlueZObjects(managedObjects: reply)
        XCTAssertEqual(objects.devices.count, 1)
        return objects.devices[0]
    }

    private func uuids(_ values: String...) -> DBusValue { .array("s", values.map { .string($0) }) }

    func testAnHM10WithARandomAddressIsAnLEUARTCar() {
        let car = device("C8:FD:19:12:34:56", [
            "Name": .string("HMSoft"), "Alias": .string("HMSoft"), "AddressType": .string("random"), "RSSI": .int16(-60),
            "UUIDs": uuids("0000FFE0-0000-1000-8000-00805F9B34FB", "00001800-0000-1000-8000-00805f9b34fb"),
        ])
        XCTAssertEqual(car.addressType, "random")
        XCTAssertNil(car.deviceClass)
        XCTAssertEqual(car.bleProfile, .hm10)
        XCTAssertEqual(car.transports, .le)
        XCTAssertFalse(car.offersSerialPort)
        XCTAssertEqual(BluetoothTool.line(car), "C8:FD:19:12:34:56  HMSoft  [RSSI -60 dBm, le, HM-10 UART]")
    }

    func testEachTransportHintOnItsOwn() {
        // A random address alone: LE (only LE devices have one), no profile yet.
        let random = device("D0:00:00:00:00:01", ["AddressType": .string("random")])
        XCTAssertEqual(random.transports, .le)
        XCTAssertNil(random.bleProfile)
        XCTAssertEqual(BluetoothTool.line(random), "D0:00:00:00:00:01  (no name)  [le]")
        // A public address and a recognised GATT service: LE.
        let nordic = device("D0:00:00:00:00:02", ["AddressType": .string("public"), "Name": .string("micro:bit"), "UUIDs": uuids(nordicService)])
        XCTAssertEqual(nordic.transports, .le)
        XCTAssertEqual(BluetoothTool.line(nordic), "D0:00:00:00:00:02  micro:bit  [le, Nordic UART]")
        // A class of device: BR/EDR (only an inquiry gives one).
        let classic = device("98:D3:31:F5:2A:11", ["AddressType": .string("public"), "Class": .uint32(0x1f00), "Name": .string("HC-05")])
        XCTAssertEqual(classic.deviceClass, 0x1f00)
        XCTAssertEqual(classic.transports, .bredr)
        // The Serial Port service: BR/EDR (an SDP record, RFCOMM).
        let spp = device("98:D3:31:F5:2A:12", ["UUIDs": uuids("00001101-0000-1000-8000-00805F9B34FB")])
        XCTAssertEqual(spp.transports, .bredr)
        // A public address and nothing else tells nothing.
        let unknown = device("D0:00:00:00:00:03", ["AddressType": .string("public"), "Name": .string("Thing")])
        XCTAssertEqual(unknown.transports, [])
        XCTAssertEqual(BluetoothTool.line(unknown), "D0:00:00:00:00:03  Thing")
        // Dual mode: a class of device and a BLE UART service (an ESP32 car).
        let dual = device("24:0A:C4:00:00:01", [
            "Name": .string("ESP32car"), "Class": .uint32(0x5a020c), "RSSI": .int16(-71),
            "UUIDs": uuids("00001101-0000-1000-8000-00805f9b34fb", nordicService),
        ])
        XCTAssertEqual(dual.transports, [.le, .bredr])
        XCTAssertEqual(dual.transports.description, "le+bredr")
        XCTAssertEqual(BluetoothTool.line(dual), "24:0A:C4:00:00:01  ESP32car  [RSSI -71 dBm, le+bredr, serial port, Nordic UART]")
    }

    func testTheClassicLineKeepsItsFormatWithTheTransport() {
        let car = device("00:AA:01:01:00:01", [
            "Name": .string("HC-05"), "Paired": .bool(true), "Trusted": .bool(true), "RSSI": .int16(-52), "Class": .uint32(0x1f00),
            "UUIDs": uuids("00001101-0000-1000-8000-00805F9B34FB"),
        ])
        XCTAssertEqual(BluetoothTool.line(car), "00:AA:01:01:00:01  HC-05  [RSSI -52 dBm, bredr, paired, trusted, serial port]")
    }

    /// 127 is HCI's "RSSI not available" (btvirt reports it for every device): no number is printed.
    func testRSSI127IsNotAvailable() {
        var car = device("C8:FD:19:12:34:56", ["Name": .string("HMSoft"), "RSSI": .int16(127), "UUIDs": uuids(hm10Service)])
        XCTAssertNil(car.rssi)
        XCTAssertEqual(BluetoothTool.line(car), "C8:FD:19:12:34:56  HMSoft  [le, HM-10 UART]")
        car.apply(["RSSI": .variant(.int16(-80))])
        XCTAssertEqual(car.rssi, -80)
        car.apply(["RSSI": .variant(.int16(127))])
        XCTAssertNil(car.rssi)
        car.apply(["RSSI": .variant(.int16(126))])
        XCTAssertEqual(car.rssi, 126, "only 127 means not available")
    }

    /// `--le` / `--bredr` hide a device known not to use that transport; one not known either way is shown
    /// (bluetoothd's discovery filter found it); neither flag (or both) shows everything.
    func testTheTransportFilter() {
        let le = device("C8:FD:19:12:34:56", ["AddressType": .string("random")])
        let bredr = device("98:D3:31:F5:2A:11", ["Class": .uint32(0x1f00)])
        let dual = device("24:0A:C4:00:00:01", ["Class": .uint32(0x1f00), "UUIDs": uuids(hm10Service)])
        let unknown = device("D0:00:00:00:00:03", ["AddressType": .string("public")])
        let all = [le, bredr, dual, unknown]
        XCTAssertEqual(all.filter { $0.matches(.le) }.map(\.address), [le, dual, unknown].map(\.address))
        XCTAssertEqual(all.filter { $0.matches(.bredr) }.map(\.address), [bredr, dual, unknown].map(\.address))
        XCTAssertEqual(all.filter { $0.matches([]) }.count, 4)
        XCTAssertEqual(all.filter { $0.matches([.le, .bredr]) }.count, 4)
    }

    /// `Adapter1.SetDiscoveryFilter`'s argument: `{"Transport": "le"|"bredr"|"auto"}` as `a{sv}`.
    func testTheDiscoveryFilter() {
        XCTAssertEqual(BlueZClient.discoveryFilter(.le), .properties(["Transport": .string("le")]))
        XCTAssertEqual(BlueZClient.discoveryFilter(.bredr), .properties(["Transport": .string("bredr")]))
        XCTAssertEqual(BlueZClient.discoveryFilter([]), .properties(["Transport": .string("auto")]))
        XCTAssertEqual(BlueZClient.discoveryFilter([.le, .bredr]), .properties(["Transport": .string("auto")]))
        XCTAssertEqual(BlueZClient.discoveryFilter(.le).signature, "a{sv}")
        XCTAssertEqual(BlueZClient.discoveryFilter(.le).dictionary?["Transport"]?.string, "le")
    }

    func testTheBLELinkURL() throws {
        XCTAssertEqual(BluetoothTool.bleLinkURL(address: "C8:FD:19:12:34:56", name: "HMSoft"), "ble://HMSoft")
        XCTAssertEqual(BluetoothTool.bleLinkURL(address: "C8:FD:19:12:34:56", name: nil), "ble://C8:FD:19:12:34:56")
        XCTAssertEqual(BluetoothTool.bleLinkURL(address: "C8:FD:19:12:34:56", name: ""), "ble://C8:FD:19:12:34:56")
        XCTAssertEqual(BluetoothTool.bleLinkURL(address: "C8:FD:19:12:34:56", name: "HMSoft", nameIsShared: true), "ble://C8:FD:19:12:34:56")
        // Whatever the name, the URL parses back to it.
        for name in ["Red car", "BT/05", "C8:FD:19:12:34:56", "name=x", "Wagen ü"] {
            let url = BluetoothTool.bleLinkURL(address: "C8:FD:19:12:34:56", name: name)
            XCTAssertEqual(try LinkURL(parsing: url), .bleDevice(name: name), url)
        }
        XCTAssertEqual(BluetoothTool.bleLinkURL(address: "C8:FD:19:12:34:56", name: "Red car"), "ble://Red%20car")
    }

    func testAURLOnlyForABLEUARTCarAndByAddressWhenTheNameIsShared() {
        let car = device("C8:FD:19:12:34:56", ["Name": .string("HMSoft"), "UUIDs": uuids(hm10Service)])
        let twin = device("C8:FD:19:12:34:57", ["Name": .string("hmsoft"), "UUIDs": uuids(hm10Service)])
        let nameless = device("C8:FD:19:12:34:58", ["UUIDs": uuids(nordicService)])
        let hc05 = device("98:D3:31:F5:2A:11", ["Name": .string("HC-05"), "Class": .uint32(0x1f00)])
        XCTAssertEqual(car.bleLinkURL(), "ble://HMSoft")
        XCTAssertEqual(car.bleLinkURL(among: [car, hc05, nameless]), "ble://HMSoft", "itself and other names do not count")
        XCTAssertEqual(car.bleLinkURL(among: [car, twin]), "ble://C8:FD:19:12:34:56", "the same name in another case")
        XCTAssertEqual(nameless.bleLinkURL(), "ble://C8:FD:19:12:34:58")
        XCTAssertNil(hc05.bleLinkURL())
        XCTAssertEqual(BluetoothTool.bleSuggestions([hc05, car, nameless]), [
            "HMSoft (C8:FD:19:12:34:56), HM-10 UART: carbridge run --link ble://HMSoft",
            "C8:FD:19:12:34:58, Nordic UART: carbridge run --link ble://C8:FD:19:12:34:58",
        ])
        XCTAssertEqual(BluetoothTool.bleSuggestions([hc05]), [])
    }

    /// `pair`'s last line: `ble://…` for a BLE UART car, the custom-profile keys for another LE device,
    /// `rfcomm://…` for the rest.
    func testPairsDriveHint() {
        let car = device("C8:FD:19:12:34:56", ["Name": .string("HMSoft"), "UUIDs": uuids(hm10Service)])
        XCTAssertEqual(BluetoothTool.driveHint(car), "drive it with: carbridge run --link ble://HMSoft (HM-10 UART)")
        let other = device("D0:00:00:00:00:01", ["Name": .string("Tag"), "AddressType": .string("random")])
        let hint = BluetoothTool.driveHint(other)
        XCTAssertTrue(hint.hasPrefix("drive it with: carbridge run --link ble://Tag, with [link] ble_service and ble_write"), hint)
        let hc05 = device("98:D3:31:F5:2A:11", ["Name": .string("HC-05"), "Class": .uint32(0x1f00)])
        XCTAssertEqual(BluetoothTool.driveHint(hc05), "drive it with: carbridge run --link rfcomm://HC-05")
        let nameless = device("98:D3:31:F5:2A:12", [:])
        XCTAssertEqual(BluetoothTool.driveHint(nameless), "drive it with: carbridge run --link rfcomm://98:D3:31:F5:2A:12")
    }

    func testUARTLabels() {
        XCTAssertEqual(BLEUARTProfile.hm10.uartLabel, "HM-10 UART")
        XCTAssertEqual(BLEUARTProfile.nordic.uartLabel, "Nordic UART")
        XCTAssertEqual(BLEUARTProfile.microchip.uartLabel, "Microchip transparent UART")
    }
}
