import DriveCore
import DriveInputModel
import DriveSystem
import DriveTestSupport
import XCTest

@testable import DriveInput

/// A pad's light and battery found from its evdev node in sysfs fixture trees laid out as hid-playstation and
/// hid-sony lay them out, and the writes that show a colour.
final class PadSysfsTests: XCTestCase {
    func testADualSensesLightbarAndBatteryAreFoundFromItsEventNode() throws {
        let sysfs = try PadSysfsFixture()
        let hid = try sysfs.addDualSense()
        let found = try XCTUnwrap(PadSysfs.find(eventNode: "/dev/input/event4", sysfsRoot: sysfs.root))
        XCTAssertEqual(found.inputDirectory, PadSysfs.resolved("\(hid)/input/input7"))
        let resolvedHID = try XCTUnwrap(PadSysfs.resolved(hid))
        XCTAssertEqual(
            found.lights,
            .multicolor(PadLightFiles.LED(directory: "\(resolvedHID)/leds/input7:rgb:indicator", maxBrightness: 255),
                        channels: ["red", "green", "blue"]),
            "the multicolor lightbar, not a white player LED")
        XCTAssertEqual(found.battery, "\(resolvedHID)/power_supply/ps-controller-battery-e4:17:d8:3a:9c:01")
        XCTAssertEqual(PadBatteryReading.read(try XCTUnwrap(found.battery)), PadBatteryReading(level: 80, charging: false))
        // The motion sensors' node is the same HID device's: it has the same light (but is never a gamepad node).
        XCTAssertNotNil(PadSysfs.find(eventNode: "/dev/input/event5", sysfsRoot: sysfs.root)?.lights)
    }

    func testADualShock4sThreeLEDsAndMasterSwitchAndBatteryAreFound() throws {
        let sysfs = try PadSysfsFixture()
        let hid = try XCTUnwrap(PadSysfs.resolved(try sysfs.addDualShock4(maximum: 255, global: 1)))
        let found = try XCTUnwrap(PadSysfs.find(eventNode: "/dev/input/event6", sysfsRoot: sysfs.root))
        func led(_ colour: String, _ maximum: Int) -> PadLightFiles.LED {
            PadLightFiles.LED(directory: "\(hid)/leds/0003:054C:05C4.0003:\(colour)", maxBrightness: maximum)
        }
        XCTAssertEqual(found.lights, .separate(red: led("red", 255), green: led("green", 255), blue: led("blue", 255), global: led("global", 1)))
        XCTAssertEqual(found.battery, "\(hid)/power_supply/sony_controller_battery_a4:53:85:0b:11:22")
        XCTAssertEqual(PadBatteryReading.read(try XCTUnwrap(found.battery)), PadBatteryReading(level: 60, charging: true))
    }

    func testKeyboardLockLightsAreIgnoredAndAPadWithoutLightsGetsNothing() throws {
        let sysfs = try PadSysfsFixture()
        // A pad whose only LEDs are input-leds' lock lights right under its input device (a keyboard-like pad).
        let (_, input) = try sysfs.addPad(hid: "platform/i8042/serio0", input: "input3", event: "event2")
        for function in ["capslock", "numlock", "scrolllock"] {
            try sysfs.addLED(in: input, name: "input3::\(function)", files: ["brightness": "0\n", "max_brightness": "1\n"])
        }
        let keyboard = try XCTUnwrap(PadSysfs.find(eventNode: "/dev/input/event2", sysfsRoot: sysfs.root))
        XCTAssertNil(keyboard.lights, "lock lights are never a pad's light")
        XCTAssertNil(keyboard.battery)
        // A plain pad: an input device and nothing else.
        try sysfs.addPad(hid: "virtual/misc/uhid/0005:045E:02E0.0005", input: "input20", event: "event9")
        let plain = try XCTUnwrap(PadSysfs.find(eventNode: "/dev/input/event9", sysfsRoot: sysfs.root))
        XCTAssertNil(plain.lights)
        XCTAssertNil(plain.battery)
        XCTAssertNil(PadSysfs.find(eventNode: "/dev/input/event42", sysfsRoot: sysfs.root), "no such node in sysfs")
        // A multicolor LED right under the input device is taken, beside a lock light.
        try sysfs.addLED(in: input, name: "input3:rgb:status", files: [
            "brightness": "0\n", "max_brightness": "100\n", "multi_index": "green red blue\n", "multi_intensity": "0 0 0\n",
        ])
        guard case .multicolor(let led, let channels)? = PadSysfs.find(eventNode: "/dev/input/event2", sysfsRoot: sysfs.root)?.lights
        else { return XCTFail("the input device's own multicolor LED") }
        XCTAssertTrue(led.directory.hasSuffix("/input3/input3:rgb:status"), led.directory)
        XCTAssertEqual(channels, ["green", "red", "blue"])
    }

    func testTheWritesForAColour() {
        let bar = PadLightFiles.multicolor(PadLightFiles.LED(directory: "/l", maxBrightness: 255), channels: ["red", "green", "blue"])
        XCTAssertEqual(bar.writes(for: LightColour(red: 0, green: 255, blue: 0)), [
            PadLightFiles.Write(path: "/l/multi_intensity", text: "0 255 0"), PadLightFiles.Write(path: "/l/brightness", text: "255"),
        ], "the intensities first, then the brightness that sends them")
        let scaled = PadLightFiles.multicolor(PadLightFiles.LED(directory: "/l", maxBrightness: 100), channels: ["blue", "red", "green"])
        XCTAssertEqual(scaled.writes(for: LightColour(red: 255, green: 128, blue: 0)).map(\.text), ["0 100 50", "100"],
                       "in multi_index's order, on max_brightness's scale")
        func led(_ name: String, _ maximum: Int) -> PadLightFiles.LED { PadLightFiles.LED(directory: "/\(name)", maxBrightness: maximum) }
        let ds4 = PadLightFiles.separate(red: led("r", 255), green: led("g", 100), blue: led("b", 1), global: led("global", 1))
        XCTAssertEqual(ds4.writes(for: LightColour(red: 255, green: 0x60, blue: 0x80)), [
            PadLightFiles.Write(path: "/r/brightness", text: "255"), PadLightFiles.Write(path: "/g/brightness", text: "38"),
            PadLightFiles.Write(path: "/b/brightness", text: "1"),
        ], "each channel on its own LED's scale; the master switch left as it is")
        XCTAssertEqual(ds4.writes(for: LightColour(red: 0, green: 0, blue: 0), globalOff: true).last,
                       PadLightFiles.Write(path: "/global/brightness", text: "1"), "a master switch found off is turned on")
        XCTAssertEqual(ds4.files, ["/r/brightness", "/g/brightness", "/b/brightness", "/global/brightness"])
    }

    func testColoursParse() {
        XCTAssertEqual(LightColour(hex: "#FF8000"), LightColour(red: 255, green: 128, blue: 0))
        XCTAssertEqual(LightColour(hex: "#00ff7f")?.description, "#00ff7f")
        for bad in ["", "ff8000", "#ff800", "#ff80001", "#gg0000", "red", "#ff 800"] {
            XCTAssertNil(LightColour(hex: bad), bad)
        }
    }
}
