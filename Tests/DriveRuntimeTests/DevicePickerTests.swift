import DriveConfig
import DriveInput
import DriveInputModel
import XCTest

@testable import DriveRuntime

/// `accelerometer = "auto"` steers by the picked pad's own motion sensors, whatever order their nodes came in.
final class DevicePickerTests: XCTestCase {
    private func node(_ deviceClass: DeviceClass, _ name: String, hid: String, input: Int) -> InputDeviceDescriptor {
        InputDeviceDescriptor(
            deviceClass: deviceClass, name: name, vendor: 0x054c, product: 0x0ce6, bustype: 5,
            syspath: "/sys/devices/virtual/misc/uhid/\(hid)/input/input\(input)/event\(input)",
            devnode: "/dev/input/event\(input)", uniq: "a0:ab:51:00:00:0\(input)")
    }

    private lazy var pad = node(.gamepad, "Sony Interactive Entertainment Wireless Controller", hid: "0005:054C:0CE6.0002", input: 7)
    private lazy var ownMotion = node(
        .accelerometer, "Sony Interactive Entertainment Wireless Controller Motion Sensors", hid: "0005:054C:0CE6.0002", input: 8)
    private lazy var touchpad = node(.other, "Sony Interactive Entertainment Wireless Controller Touchpad", hid: "0005:054C:0CE6.0002", input: 9)
    private lazy var otherPadsMotion = node(
        .accelerometer, "Sony Interactive Entertainment Wireless Controller Motion Sensors", hid: "0005:054C:0CE6.0003", input: 11)
    private let harnessSensor = InputDeviceDescriptor(
        deviceClass: .accelerometer, name: "Harness Motion Sensor", syspath: "/sys/devices/virtual/input/input6/event6",
        devnode: "/dev/input/event6")
    private let laptopIIO = InputDeviceDescriptor(
        deviceClass: .iioAccelerometer, name: "mxc4005", subsystem: "iio",
        syspath: "/sys/devices/platform/i2c-1/i2c-MXC4005:00/iio:device0", sysfsDirectory: "/sys/devices/platform/i2c-1/i2c-MXC4005:00/iio:device0")

    private func tiltPicker(accelerometer: String = "auto") throws -> DevicePicker {
        var config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        config.steering.source = .tilt
        config.devices.accelerometer = DeviceMatch(parsing: accelerometer)
        return DevicePicker(config: config)
    }

    private func picked(_ picker: DevicePicker, among devices: [InputDeviceDescriptor]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: picker.assignments(among: devices).map { ($0.entry.key, $0.device.syspath) })
    }

    func testHardwareParentIsTheDeviceAboveTheInputNode() {
        XCTAssertEqual(pad.hardwareParent, "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0002")
        XCTAssertTrue(ownMotion.isSibling(of: pad))
        XCTAssertTrue(touchpad.isSibling(of: pad))
        XCTAssertFalse(otherPadsMotion.isSibling(of: pad), "another pad of the same model is not a sibling")
        XCTAssertFalse(pad.isSibling(of: pad), "a node is not its own sibling")
        XCTAssertNil(laptopIIO.hardwareParent)
        XCTAssertFalse(laptopIIO.isSibling(of: pad))
    }

    func testAutoTakesThePadsOwnMotionSensorsOverOnesThatCameFirst() throws {
        let picker = try tiltPicker()
        // udev's order: the foreign sensors first, then the pad, then its motion sensors (hid-playstation's order)
        let got = picked(picker, among: [harnessSensor, laptopIIO, otherPadsMotion, pad, ownMotion, touchpad])
        XCTAssertEqual(got["devices.gamepad"], pad.syspath)
        XCTAssertEqual(got["devices.accelerometer"], ownMotion.syspath)
        // hid-sony's order: touchpad, motion sensors, then the pad
        let sony = picked(picker, among: [harnessSensor, touchpad, ownMotion, pad])
        XCTAssertEqual(sony["devices.accelerometer"], ownMotion.syspath)
    }

    func testWithoutItsOwnSensorsTheFirstAccelerometer() throws {
        let picker = try tiltPicker()
        XCTAssertEqual(picked(picker, among: [harnessSensor, laptopIIO, pad])["devices.accelerometer"], harnessSensor.syspath)
        XCTAssertEqual(picked(picker, among: [laptopIIO, otherPadsMotion])["devices.accelerometer"], laptopIIO.syspath)
        XCTAssertTrue(DevicePicker.followsThePad(picker.entries.first { $0.role == .accelerometer }!))
    }

    func testAnExplicitAccelerometerIsTakenAsWritten() throws {
        let picker = try tiltPicker(accelerometer: "Harness Motion Sensor")
        XCTAssertEqual(picked(picker, among: [pad, ownMotion, harnessSensor])["devices.accelerometer"], harnessSensor.syspath)
        XCTAssertFalse(DevicePicker.followsThePad(picker.entries.first { $0.role == .accelerometer }!),
                       "a named sensor never gives way to the pad's")
    }
}
