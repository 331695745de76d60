import DriveBluetooth
import DriveDBus
import XCTest

final class DeviceResolverTests: XCTestCase {
    func device(_ address: String, _ name: String?, adapter: String = "/org/bluez/hci0", paired: Bool = false, alias: String? = nil) -> BluetoothDevice {
        var d = BluetoothDevice(path: BluetoothDevice.path(adapterPath: adapter, address: address))
        d.name = name
        d.alias = alias ?? name ?? address.replacingOccurrences(of: ":", with: "-")
        d.paired = paired
        return d
    }

    func testNoMatchListsKnownNames() {
        let devices = [device("00:AA:01:01:00:01", "RoboCar"), device("00:AA:01:01:00:02", nil)]
        XCTAssertEqual(DeviceResolver.resolve("HC-05", among: devices), .none)
        let sentence = DeviceResolver.notFoundSentence("HC-05", known: devices)
        XCTAssertTrue(sentence.contains("no Bluetooth device named \"HC-05\""), sentence)
        XCTAssertTrue(sentence.contains("carbridge scan"), sentence)
        XCTAssertTrue(sentence.contains("known: RoboCar"), sentence)
        // the address-like default alias of a nameless device is not a name
        XCTAssertFalse(sentence.contains("00-AA-01-01-00-02"), sentence)
    }

    func testOneMatchByNameAliasCaseOrAddress() {
        let car = device("98:D3:31:F5:2A:11", "HC-05")
        let other = device("00:11:22:33:44:55", "Phone")
        XCTAssertEqual(DeviceResolver.resolve("HC-05", among: [other, car]), .one(car))
        XCTAssertEqual(DeviceResolver.resolve("hc-05", among: [other, car]), .one(car))
        XCTAssertEqual(DeviceResolver.resolve("98:d3:31:f5:2a:11", among: [other, car]), .one(car))
        let renamed = device("98:D3:31:F5:2A:12", "HC-05", alias: "Red car")
        XCTAssertEqual(DeviceResolver.resolve("Red car", among: [renamed, other]), .one(renamed))
        // an exact match wins over case-insensitive ones
        let lower = device("98:D3:31:F5:2A:13", "hc-05")
        XCTAssertEqual(DeviceResolver.resolve("hc-05", among: [car, lower]), .one(lower))
    }

    func testSeveralMatchesAreAmbiguousUnlessOneIsPaired() {
        let a = device("98:D3:31:F5:2A:11", "HC-05")
        let b = device("98:D3:31:F5:2A:22", "HC-05")
        guard case .several(let both) = DeviceResolver.resolve("HC-05", among: [b, a]) else { return XCTFail("not ambiguous") }
        XCTAssertEqual(both.map(\.address), ["98:D3:31:F5:2A:11", "98:D3:31:F5:2A:22"])
        let sentence = DeviceResolver.ambiguousSentence("HC-05", candidates: both, use: "use rfcomm://ADDRESS instead")
        XCTAssertEqual(sentence, "\"HC-05\" names 2 devices: 98:D3:31:F5:2A:11 HC-05 on hci0; 98:D3:31:F5:2A:22 HC-05 on hci0; use rfcomm://ADDRESS instead")
        let pairedB = device("98:D3:31:F5:2A:22", "HC-05", paired: true)
        XCTAssertEqual(DeviceResolver.resolve("HC-05", among: [a, pairedB], preferPaired: true), .one(pairedB))
        XCTAssertNotEqual(DeviceResolver.resolve("HC-05", among: [a, pairedB], preferPaired: false), .one(pairedB))
        let pairedA = device("98:D3:31:F5:2A:11", "HC-05", paired: true)
        guard case .several = DeviceResolver.resolve("HC-05", among: [pairedA, pairedB], preferPaired: true) else {
            return XCTFail("two paired HC-05s must stay ambiguous")
        }
    }

    func testDeviceFromManagedObjects() {
        let reply: [DBusValue] = [.array("{oa{sa{sv}}}", [
            .dictEntry(.objectPath("/org/bluez/hci0"), .array("{sa{sv}}", [
                .dictEntry(.string("org.bluez.Adapter1"), .properties([
                    "Address": .string("00:AA:01:00:00:01"), "Powered": .bool(true), "PowerState": .string("on"),
                ])),
            ])),
            .dictEntry(.objectPath("/org/bluez/hci0/dev_00_AA_01_01_00_01"), .array("{sa{sv}}", [
                .dictEntry(.string("org.bluez.Device1"), .properties([
                    "Address": .string("00:AA:01:01:00:01"), "Name": .string("HC-05"), "Alias": .string("HC-05"),
                    "Paired": .bool(true), "Trusted": .bool(false), "RSSI": .int16(-52),
                    "UUIDs": .array("s", [.string("00001101-0000-1000-8000-00805F9B34FB")]),
                    "Adapter": .objectPath("/org/bluez/hci0"),
                ])),
            ])),
        ])]
        let objects = BlueZObjects(managedObjects: reply)
        XCTAssertEqual(objects.adapters.map(\.name), ["hci0"])
        XCTAssertEqual(objects.adapter(named: "hci0")?.powered, true)
        XCTAssertNil(objects.adapter(named: "hci1"))
        XCTAssertEqual(objects.devices.count, 1)
        let car = objects.devices[0]
        XCTAssertEqual(car.address, "00:AA:01:01:00:01")
        XCTAssertEqual(car.knownName, "HC-05")
        XCTAssertEqual(car.rssi, -52)
        XCTAssertTrue(car.paired)
        XCTAssertTrue(car.offersSerialPort)
        XCTAssertEqual(BluetoothTool.line(car), "00:AA:01:01:00:01  HC-05  [RSSI -52 dBm, bredr, paired, serial port]")
        var nameless = BluetoothDevice(path: "/org/bluez/hci1/dev_00_AA_01_01_00_09")
        nameless.apply(["Alias": .variant(.string("00-AA-01-01-00-09"))])
        XCTAssertEqual(nameless.address, "00:AA:01:01:00:09")
        XCTAssertEqual(nameless.adapterPath, "/org/bluez/hci1")
        XCTAssertNil(nameless.knownName)
        XCTAssertEqual(BluetoothTool.line(nameless), "00:AA:01:01:00:09  (no name)")
    }

    func testAdapterAdvice() {
        var adapter = BluetoothAdapter(path: "/org/bluez/hci0")
        adapter.powered = true
        XCTAssertNil(AdapterAdvice.problem(adapter, rfkill: (false, false)))
        adapter.powered = false
        XCTAssertEqual(AdapterAdvice.problem(adapter, rfkill: (false, false)), "the Bluetooth adapter hci0 is off: run `bluetoothctl power on`")
        XCTAssertTrue(AdapterAdvice.problem(adapter, rfkill: (false, true))!.contains("rfkill unblock bluetooth"))
        XCTAssertTrue(AdapterAdvice.problem(adapter, rfkill: (true, false))!.contains("hardware switch"))
        adapter.powerState = "off-blocked"
        XCTAssertTrue(AdapterAdvice.problem(adapter, rfkill: (false, false))!.contains("rfkill unblock bluetooth"))
    }
}
