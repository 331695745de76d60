import DriveInputModel
import DriveMapping
import XCTest

@testable import DriveInput

final class DeviceClassifierTests: XCTestCase {
    func testInputClassTable() {
        let cases: [(String, [String: String], Set<UInt16>, Set<UInt16>, DeviceClass)] = [
            ("udev joystick", ["ID_INPUT": "1", "ID_INPUT_JOYSTICK": "1"], [], [], .gamepad),
            ("pad with key flag too", ["ID_INPUT_JOYSTICK": "1", "ID_INPUT_KEY": "1"], [], [], .gamepad),
            ("BTN_SOUTH without udev db", [:], [0x130, 0x131], [], .gamepad),
            ("DualSense motion sensors", ["ID_INPUT_ACCELEROMETER": "1"], [], [], .accelerometer),
            ("accelerometer property bit", [:], [], [6], .accelerometer),
            ("accelerometer beats gamepad", ["ID_INPUT_JOYSTICK": "1", "ID_INPUT_ACCELEROMETER": "1"], [], [], .accelerometer),
            ("foot pedal", ["ID_INPUT_KEY": "1"], [30, 31], [], .keyboard),
            ("keyboard", ["ID_INPUT_KEYBOARD": "1", "ID_INPUT_KEY": "1"], [], [], .keyboard),
            ("mouse", ["ID_INPUT_MOUSE": "1"], [0x110], [], .other),
            ("joystick flag 0", ["ID_INPUT_JOYSTICK": "0"], [], [], .other),
        ]
        for (label, properties, keys, inputProperties, expected) in cases {
            XCTAssertEqual(
                DeviceClassifier.classifyInput(properties: properties, keys: keys, inputProperties: inputProperties),
                expected, label)
        }
    }

    func testBalanceBoardByTheNameHidWiimoteGivesIt() {
        // udev calls the board a joystick (it has BTN_A); its name decides.
        XCTAssertEqual(
            DeviceClassifier.classifyInput(
                properties: ["ID_INPUT": "1", "ID_INPUT_JOYSTICK": "1"], keys: [0x130],
                name: "Nintendo Wii Remote Balance Board"),
            .balanceBoard)
        XCTAssertEqual(
            DeviceClassifier.classifyInput(properties: ["ID_INPUT_JOYSTICK": "1"], keys: [0x130], name: "Nintendo Wii Remote"),
            .gamepad, "the remote itself is no board")
        XCTAssertEqual(DeviceRole.board.acceptedClasses, [.balanceBoard])
    }

    func testIIOClass() {
        XCTAssertEqual(
            DeviceClassifier.classifyIIO(attributeNames: ["name", "in_accel_x_raw", "in_accel_y_raw", "in_accel_z_raw", "in_accel_scale"]),
            .iioAccelerometer)
        XCTAssertEqual(DeviceClassifier.classifyIIO(attributeNames: ["name", "in_accel_x_raw", "in_accel_y_raw"]), .other)
        XCTAssertEqual(DeviceClassifier.classifyIIO(attributeNames: ["in_illuminance_raw"]), .other)
    }

    func testSysfsBitmaskWordsAreMostSignificantFirst() {
        // capabilities/key of an Xbox pad on x86_64: BTN_SOUTH… live in word 4 (bits 256…319).
        let text = "7cdb000000000000 0 0 0 0"
        let bits = DeviceClassifier.bits(ofSysfsBitmask: text)
        XCTAssertTrue(bits.contains(0x130))
        XCTAssertTrue(bits.contains(0x13e))
        XCTAssertFalse(bits.contains(0x132))
        XCTAssertEqual(DeviceClassifier.bits(ofSysfsBitmask: "40"), [6])
        XCTAssertEqual(DeviceClassifier.bits(ofSysfsBitmask: "1 0", wordBits: 32), [32])
        XCTAssertEqual(DeviceClassifier.bits(ofSysfsBitmask: "zz 1"), [0], "bad words count as 0")
        XCTAssertEqual(DeviceClassifier.bits(ofSysfsBitmask: ""), [])
    }
}
