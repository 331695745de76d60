import DriveConfig
import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

/// Actions, tilt axes and device matchers are parsed once, at load, into types.
final class TypedValuesTests: XCTestCase {
    func testButtonActionsAreTyped() throws {
        let config = try CarbridgeConfig.parse(text: """
            [buttons]
            BTN_START = "engine"
            BTN_TR = "speed_up"
            [buttons.long_press]
            BTN_SELECT = "calibrate"
            """, file: "t.toml")
        XCTAssertEqual(config.buttons.map(\.action), [.engine, .speedUp])
        XCTAssertEqual(config.longPressButtons.map(\.action), [.calibrate])
        XCTAssertEqual(CarbridgeConfig.defaultButtons.first?.action, .engine)
    }

    func testTiltAxesParse() throws {
        XCTAssertEqual(TiltAxes(parsing: "x,z")?.description, "x,z")
        XCTAssertEqual(TiltAxes(parsing: " -y , z ")?.description, "-y,z")
        XCTAssertEqual(TiltAxes(parsing: "-y,z")?.lateral, TiltAxes.Axis(.y, flipped: true))
        XCTAssertEqual(TiltAxes(parsing: "x,-z")?.vertical, TiltAxes.Axis(.z, flipped: true))
        for bad in ["x,x", "x,-x", "x", "x,y,z", "w,z", "--x,z", "", "X,Z"] {
            XCTAssertNil(TiltAxes(parsing: bad), bad)
        }
        let axes = try XCTUnwrap(TiltAxes(parsing: "-x,-z"))
        XCTAssertEqual(axes.mountMatrix.apply(Vector3(x: 1, y: 2, z: 3)), Vector3(x: -1, y: 2, z: -3))
        let config = try CarbridgeConfig.parse(text: "[steering]\ntilt_axes = \"-y,z\"\n", file: "t.toml")
        XCTAssertEqual(config.steering.tiltAxes, TiltAxes(parsing: "-y,z"))
    }

    func testDeviceMatchersAreTyped() throws {
        let config = try CarbridgeConfig.parse(text: """
            [devices]
            gamepad = "045e:028e"
            accelerometer = "*Motion Sensors*"
            keyboard = "pci-0000:00:14.0-usb-0:2:1.0"
            """, file: "t.toml")
        XCTAssertEqual(config.devices.gamepad, .vendorProduct(vendor: 0x045e, product: 0x028e))
        XCTAssertEqual(config.devices.accelerometer, .nameGlob("*Motion Sensors*"))
        XCTAssertEqual(config.devices.keyboard, .udevPath("pci-0000:00:14.0-usb-0:2:1.0"))

        let defaults = try CarbridgeConfig.parse(text: "", file: "t.toml")
        XCTAssertEqual(defaults.devices.gamepad, .auto)
        XCTAssertEqual(defaults.devices.accelerometer, .auto)
        XCTAssertEqual(defaults.devices.keyboard, DeviceMatch.none)

        for (text, match) in [("none", DeviceMatch.none), ("", .none), ("auto", .auto), ("name:none", .nameGlob("none"))] {
            let config = try CarbridgeConfig.parse(text: "[devices]\ngamepad = \"\(text)\"\n", file: "t.toml")
            XCTAssertEqual(config.devices.gamepad, match, text)
        }
    }

    func testDeviceMatchConfigValueReadsBack() {
        let matches: [DeviceMatch] = [
            .auto, .none, .nameGlob("*X-Box*"), .nameGlob("none"), .nameGlob("045e:028e"), .nameGlob("auto"),
            .vendorProduct(vendor: 0x45e, product: 0x28e), .udevPath("/sys/devices/x"), .udevPath("foo"),
            .unique("e4:17:d8:3a:9c:01"), .unique("sn-00042"), .unique("auto"), .nameGlob("e4:17:d8:3a:9c:01"),
        ]
        for match in matches {
            XCTAssertEqual(DeviceMatch(parsing: match.configValue), match, match.configValue)
        }
        XCTAssertEqual(DeviceMatch.nameGlob("*X-Box*").configValue, "*X-Box*")
        XCTAssertEqual(DeviceMatch.unique("e4:17:d8:3a:9c:01").configValue, "e4:17:d8:3a:9c:01")
        XCTAssertEqual(DeviceMatch.unique("sn-00042").configValue, "uniq:sn-00042")
    }

    func testMapperSettingsFollowOverridesAfterLoad() throws {
        var config = try CarbridgeConfig.parse(text: "[throttle]\naxis = \"ABS_RZ\"\n", file: "t.toml")
        XCTAssertNotNil(config.mapperSettings.stick)
        XCTAssertNil(config.mapperSettings.tilt)
        XCTAssertEqual(config.mapperSettings.throttle?.maxSpeed, 240)
        // `monitor --tilt`, `calibrate`, `run --max-speed`.
        config.steering.source = .tilt
        config.drive.maxSpeed = 120
        XCTAssertNil(config.mapperSettings.stick)
        XCTAssertEqual(config.mapperSettings.tilt?.lateralAxis, .x)
        XCTAssertEqual(config.mapperSettings.throttle?.maxSpeed, 120)
    }

    func testBuiltInDefaultsHaveNoFileAndResolvedButtons() throws {
        let config = try CarbridgeConfig.defaults(resolver: LibevdevNames())
        XCTAssertNil(config.file)
        XCTAssertEqual(config.mapperSettings.buttons.shortPress.count, CarbridgeConfig.defaultButtons.count)
        XCTAssertEqual(config.mapping.stickAxisCodes?.x, 0)
        XCTAssertEqual(config.mapping.stickAxisCodes?.y, 1)
        XCTAssertThrowsError(try CarbridgeConfig.defaults(resolver: NoNames())) { error in
            XCTAssertTrue("\(error)".hasPrefix("built-in defaults:"), "\(error)")
        }
    }
}
