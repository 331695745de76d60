import DriveInputModel
import XCTest

import DriveMapping
@testable import DriveInput

final class DeviceSelectorTests: XCTestCase {
    let keyboard = InputDeviceDescriptor(
        deviceClass: .keyboard, name: "AT Translated Set 2 keyboard", vendor: 0x0001, product: 0x0001,
        syspath: "/sys/devices/platform/i8042/serio0/input/input3/event3", devnode: "/dev/input/event3",
        idPath: "platform-i8042-serio-0")
    let xbox = InputDeviceDescriptor(
        deviceClass: .gamepad, name: "Microsoft X-Box 360 pad", vendor: 0x045e, product: 0x028e,
        syspath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/input/input20/event7",
        devnode: "/dev/input/event7", idPath: "pci-0000:00:14.0-usb-0:2:1.0")
    let dualSense = InputDeviceDescriptor(
        deviceClass: .gamepad, name: "Sony Interactive Entertainment DualSense Wireless Controller",
        vendor: 0x054c, product: 0x0ce6, syspath: "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0001/input/input30/event9",
        devnode: "/dev/input/event9")
    let dualSenseMotion = InputDeviceDescriptor(
        deviceClass: .accelerometer, name: "Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors",
        vendor: 0x054c, product: 0x0ce6, syspath: "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0001/input/input31/event10",
        devnode: "/dev/input/event10")
    let laptopIIO = InputDeviceDescriptor(
        deviceClass: .iioAccelerometer, name: "mxc4005", subsystem: "iio",
        syspath: "/sys/devices/platform/80860F41:01/i2c-1/i2c-MXC4005:00/iio:device0",
        devnode: "/dev/iio:device0", sysfsDirectory: "/sys/devices/platform/80860F41:01/i2c-1/i2c-MXC4005:00/iio:device0")

    var all: [InputDeviceDescriptor] { [keyboard, laptopIIO, xbox, dualSenseMotion, dualSense] }

    func testParseTable() {
        let cases: [(String, DeviceMatch)] = [
            ("auto", .auto), ("", .auto), (" AUTO ", .auto),
            ("045e:028e", .vendorProduct(vendor: 0x045e, product: 0x028e)),
            ("054C:0CE6", .vendorProduct(vendor: 0x054c, product: 0x0ce6)),
            ("45e:28e", .nameGlob("45e:28e")),
            ("*X-Box*", .nameGlob("*X-Box*")),
            ("name:045e:028e", .nameGlob("045e:028e")),
            ("/sys/devices/pci0000:00/x", .udevPath("/sys/devices/pci0000:00/x")),
            ("pci-0000:00:14.0-usb-0:2:1.0", .udevPath("pci-0000:00:14.0-usb-0:2:1.0")),
            ("path:foo", .udevPath("foo")),
            ("E4:17:D8:3A:9C:01", .unique("e4:17:d8:3a:9c:01")),
            ("address:e4:17:d8:3a:9c:01", .unique("e4:17:d8:3a:9c:01")),
            ("uniq:SN-00042", .unique("sn-00042")),
            ("uniq:", .unique("")),
            ("e4:17:d8:3a:9c", .nameGlob("e4:17:d8:3a:9c")),
            ("e4:17:d8:3a:9c:0g", .nameGlob("e4:17:d8:3a:9c:0g")),
            ("name:e4:17:d8:3a:9c:01", .nameGlob("e4:17:d8:3a:9c:01")),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(DeviceSelector.parse(text), expected, text)
        }
    }

    func testAutoTakesTheFirstGamepadAndTheFirstAccelerometer() {
        XCTAssertEqual(DeviceSelector.select(.auto, role: .gamepad, among: all), xbox)
        XCTAssertEqual(DeviceSelector.select(.auto, role: .accelerometer, among: all), laptopIIO)
        XCTAssertEqual(DeviceSelector.select(.auto, role: .accelerometer, among: [xbox, dualSenseMotion, laptopIIO]), dualSenseMotion)
        XCTAssertEqual(DeviceSelector.select(.auto, role: .keyboard, among: all), keyboard)
        XCTAssertNil(DeviceSelector.select(.auto, role: .gamepad, among: [keyboard, laptopIIO]))
    }

    func testExplicitMatchesPickTheNodeThatFitsTheRole() {
        let ds = DeviceMatch.vendorProduct(vendor: 0x054c, product: 0x0ce6)
        XCTAssertEqual(DeviceSelector.select(ds, role: .gamepad, among: all), dualSense)
        XCTAssertEqual(DeviceSelector.select(ds, role: .accelerometer, among: all), dualSenseMotion)
        XCTAssertEqual(DeviceSelector.select(.nameGlob("*DualSense*"), role: .accelerometer, among: all), dualSenseMotion)
        XCTAssertEqual(DeviceSelector.select(.nameGlob("*X-Box 360*"), role: .gamepad, among: all), xbox)
        XCTAssertNil(DeviceSelector.select(.nameGlob("*x-box*"), role: .gamepad, among: all), "globs are case-sensitive")
        XCTAssertEqual(DeviceSelector.select(.nameGlob("Microsoft X-Box 36? pad"), role: .gamepad, among: all), xbox)
        XCTAssertEqual(DeviceSelector.select(.nameGlob("AT *"), role: .gamepad, among: all), keyboard, "a keyboard can be a button box")
        XCTAssertNil(DeviceSelector.select(.nameGlob("AT *"), role: .accelerometer, among: all))
        XCTAssertEqual(DeviceSelector.select(.udevPath("pci-0000:00:14.0-usb-0:2:1.0"), role: .gamepad, among: all), xbox)
        XCTAssertEqual(DeviceSelector.select(.udevPath(xbox.syspath), role: .gamepad, among: all), xbox)
        XCTAssertEqual(
            DeviceSelector.select(.udevPath("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/input/input20"), role: .gamepad, among: all),
            xbox, "the parent input device's syspath picks its event node")
        XCTAssertEqual(DeviceSelector.select(.udevPath("/devices/platform/80860F41:01/i2c-1/i2c-MXC4005:00/iio:device0"), role: .accelerometer, among: all), laptopIIO)
        XCTAssertNil(DeviceSelector.select(.vendorProduct(vendor: 1, product: 2), role: .gamepad, among: all))
    }

    /// Two identical Bluetooth pads (same name, same vendor:product, no `ID_PATH`) told apart by address.
    func testTwoIdenticalBluetoothPadsArePickedByTheirAddress() {
        func pad(_ n: Int, _ uniq: String?) -> InputDeviceDescriptor {
            InputDeviceDescriptor(
                deviceClass: .gamepad, name: "Wireless Controller", vendor: 0x054c, product: 0x09cc, bustype: 5,
                syspath: "/sys/devices/virtual/misc/uhid/0005:054C:09CC.000\(n)/input/input4\(n)/event1\(n)",
                devnode: "/dev/input/event1\(n)", uniq: uniq)
        }
        let red = pad(1, "a4:53:85:00:00:01"), blue = pad(2, "a4:53:85:00:00:02"), usb = pad(3, nil)
        let pads = [usb, red, blue]
        XCTAssertEqual(DeviceSelector.select(DeviceMatch(parsing: "A4:53:85:00:00:02"), role: .gamepad, among: pads), blue)
        XCTAssertEqual(DeviceSelector.select(DeviceMatch(parsing: "a4:53:85:00:00:01"), role: .gamepad, among: pads), red)
        XCTAssertNil(DeviceSelector.select(DeviceMatch(parsing: "a4:53:85:00:00:03"), role: .gamepad, among: pads))
        XCTAssertNil(DeviceSelector.select(.unique(""), role: .gamepad, among: pads), "an empty uniq never matches a device without one")
        XCTAssertEqual(DeviceSelector.select(.auto, role: .gamepad, among: pads), usb)
        // A serial number as uniq, compared without case.
        XCTAssertTrue(DeviceSelector.matches(.unique("sn-00042"), pad(4, "SN-00042")))
        XCTAssertFalse(DeviceSelector.matches(.unique("sn-00042"), pad(4, "SN-000421")))
    }


    func testVendorProductText() {
        XCTAssertEqual(DeviceSelector.vendorProductText(vendor: 0x45e, product: 0x28e), "045e:028e")
        XCTAssertEqual(xbox.vendorProduct, "045e:028e")
        XCTAssertNil(laptopIIO.vendorProduct)
    }
}
