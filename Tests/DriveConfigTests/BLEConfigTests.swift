import DriveConfig
import DriveLinkModel
import XCTest

/// `[link] ble_service`, `ble_write`, `ble_notify`: UUIDs in any spelling, the pair rule, `ble_notify`
/// defaulting to `ble_write`, and the profile they give `LinkOptions`.
final class BLEConfigTests: XCTestCase {
    private let ffe0 = "0000ffe0-0000-1000-8000-00805f9b34fb"
    private let ffe1 = "0000ffe1-0000-1000-8000-00805f9b34fb"
    private let nordicRX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    private let nordicTX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"

    private func load(_ link: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.load(text: "[link]\nurl = \"ble://HMSoft\"\n" + link, file: "t.toml")
    }

    private func errors(_ link: String, url: String = "ble://HMSoft") -> [String] {
        do throws(ConfigErrors) {
            _ = try CarbridgeConfig.load(text: "[link]\nurl = \"\(url)\"\n" + link, file: "t.toml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testUnsetMeansRecogniseTheModule() throws {
        let config = try load("")
        XCTAssertNil(config.link.bleService)
        XCTAssertNil(config.link.bleWrite)
        XCTAssertNil(config.link.bleNotify)
        XCTAssertNil(config.link.bleProfile)
        XCTAssertNil(config.link.options.bleProfile)
        let empty = try load("ble_service = \"\"\nble_write = \"\"\nble_notify = \"\"\n")
        XCTAssertNil(empty.link.options.bleProfile)
    }

    func testEverySpellingIsNormalised() throws {
        for (service, write) in [
            ("FFE0", "ffe1"), ("0xFFE0", "0XFFE1"), ("0000FFE0", "0000ffe1"),
            ("0000FFE0-0000-1000-8000-00805F9B34FB", "0000ffe100001000800000805f9b34fb"),
        ] {
            let config = try load("ble_service = \"\(service)\"\nble_write = \"\(write)\"\n")
            XCTAssertEqual(config.link.bleService, ffe0, service)
            XCTAssertEqual(config.link.bleWrite, ffe1, write)
        }
        let nordic = try load(
            "ble_service = \"6E400001-B5A3-F393-E0A9-E50E24DCCA9E\"\nble_write = \"6e400002b5a3f393e0a9e50e24dcca9e\"\n"
                + "ble_notify = \"6E400003-b5a3-f393-e0a9-e50e24dcca9e\"\n")
        XCTAssertEqual(nordic.link.bleService, BLEUARTProfile.nordic.service)
        XCTAssertEqual(nordic.link.bleWrite, nordicRX)
        XCTAssertEqual(nordic.link.bleNotify, nordicTX)
    }

    func testBadValuesNameTheKeyAndAnExample() {
        for bad in ["FFE", "FFE0X", "ffe0-0000", "0x", "6e400001-b5a3-f393-e0a9-e50e24dcca9", "6e400001b5a3-f393-e0a9-e50e24dcca9e",
                    "6e40-0001-b5a3-f393-e0a9e50e24dcca9e", " FFE0", "ＦＦＥ０"] {
            XCTAssertEqual(
                errors("ble_service = \"\(bad)\"\nble_write = \"FFE1\"\n"),
                ["t.toml:3: link.ble_service: \"\(bad)\" is not a UUID: give a 16-bit one like \"FFE1\" or a 128-bit one "
                    + "like \"6e400002-b5a3-f393-e0a9-e50e24dcca9e\" (\"\" = recognise the module)"],
                bad)
        }
        // Each bad value once: the pair rule does not judge the default a bad value left (ble_write unset).
        let both = errors("ble_service = \"FFE0\"\nble_write = \"GGGG\"\nble_notify = \"12345\"\n")
        XCTAssertEqual(both.count, 2, "\(both)")
        XCTAssertTrue(both[0].hasPrefix("t.toml:4: link.ble_write: \"GGGG\" is not a UUID"), "\(both)")
        XCTAssertTrue(both[1].hasPrefix("t.toml:5: link.ble_notify: \"12345\" is not a UUID"), "\(both)")
        XCTAssertEqual(errors("ble_write = 0xFFE1\n").first?.hasPrefix("t.toml:3: link.ble_write: expected a string"), true,
                       "\(errors("ble_write = 0xFFE1\n"))")
    }

    func testServiceAndWriteGoTogether() {
        let message = "ble_service and ble_write go together: set both (the UART service and the characteristic frames are "
            + "written to, e.g. ble_service = \"FFE0\" and ble_write = \"FFE1\"), or neither to recognise the module"
        XCTAssertEqual(errors("ble_service = \"FFE0\"\n"), ["t.toml:3: link.ble_service: " + message])
        XCTAssertEqual(errors("connect_timeout_ms = 3000\nble_write = \"FFE1\"\n"), ["t.toml:4: link.ble_write: " + message])
        XCTAssertEqual(errors("ble_service = \"FFE0\"\nble_notify = \"FFE1\"\n"), ["t.toml:3: link.ble_service: " + message])
        XCTAssertEqual(
            errors("ble_notify = \"FFE1\"\n"),
            ["t.toml:3: link.ble_notify: ble_notify needs ble_service and ble_write (e.g. ble_service = \"FFE0\", ble_write = \"FFE1\")"])
        XCTAssertEqual(errors("ble_service = \"FFE0\"\nble_write = \"FFE1\"\n"), [])
        // A bad ble_notify does not hide the pair rule, nor the other way round.
        XCTAssertEqual(errors("ble_service = \"FFE0\"\nble_notify = \"x\"\n").map { $0.prefix(34) },
                       ["t.toml:3: link.ble_service: ble_se", "t.toml:4: link.ble_notify: \"x\" is "])
        // An explicit "" is unset: the rule applies (at the first key the file sets).
        XCTAssertEqual(errors("ble_service = \"\"\nble_write = \"FFE1\"\n"), ["t.toml:3: link.ble_service: " + message])
    }

    func testNotifyDefaultsToWrite() throws {
        let hm10Style = try load("ble_service = \"FFE0\"\nble_write = \"FFE1\"\n")
        XCTAssertNil(hm10Style.link.bleNotify)
        XCTAssertEqual(hm10Style.link.bleProfile?.notify, ffe1)
        let separate = try load("ble_service = \"FFE0\"\nble_write = \"FFE1\"\nble_notify = \"FFE2\"\n")
        XCTAssertEqual(separate.link.bleProfile?.write, ffe1)
        XCTAssertEqual(separate.link.bleProfile?.notify, "0000ffe2-0000-1000-8000-00805f9b34fb")
    }

    func testTheProfileReachesTheLinkOptions() throws {
        let config = try load(
            "ble_service = \"6e400001-b5a3-f393-e0a9-e50e24dcca9e\"\nble_write = \"6E400002-B5A3-F393-E0A9-E50E24DCCA9E\"\n"
                + "ble_notify = \"6e400003-b5a3-f393-e0a9-e50e24dcca9e\"\nconnect_timeout_ms = 2500\n")
        let options = config.link.options
        XCTAssertEqual(
            options.bleProfile,
            BLEUARTProfile(name: "custom", service: BLEUARTProfile.nordic.service, write: nordicRX, notify: nordicTX))
        XCTAssertEqual(options.bleProfile?.name, "custom")
        XCTAssertNotEqual(options.bleProfile, BLEUARTProfile.nordic, "named custom, not the built-in profile")
        XCTAssertEqual(options.connectTimeout, .milliseconds(2500))
        XCTAssertEqual(config.link.bleProfile?.description, "custom (service 6e400001-b5a3-f393-e0a9-e50e24dcca9e, "
            + "write 6e400002-b5a3-f393-e0a9-e50e24dcca9e, notify 6e400003-b5a3-f393-e0a9-e50e24dcca9e)")
    }

    /// On a link that is not ble:// the keys are accepted (a `--link` flag or a URL the dashboard saves must not
    /// make the file invalid) and `check-config` says they are not used.
    func testKeysOnAnotherLinkAreANoticeNotAnError() throws {
        XCTAssertEqual(errors("ble_service = \"FFE0\"\nble_write = \"FFE1\"\n", url: "rfcomm://HC-05"), [])
        let config = try CarbridgeConfig.load(
            text: "[link]\nurl = \"rfcomm://HC-05\"\nble_service = \"FFE0\"\nble_write = \"FFE1\"\n", file: "t.toml")
        XCTAssertFalse(config.link.isBLE)
        XCTAssertEqual(config.link.unusedBLEKeysNotice, "ble_service, ble_write are not used: url rfcomm://HC-05 is not a ble:// link")
        XCTAssertTrue(try load("ble_service = \"FFE0\"\nble_write = \"FFE1\"\n").link.isBLE)
        XCTAssertNil(try load("ble_service = \"FFE0\"\nble_write = \"FFE1\"\n").link.unusedBLEKeysNotice)
        XCTAssertNil(try CarbridgeConfig.load(text: "[link]\nurl = \"sim\"\n", file: "t.toml").link.unusedBLEKeysNotice)
        // The pair rule holds whatever the url.
        XCTAssertEqual(errors("ble_write = \"FFE1\"\n", url: "sim").count, 1)
    }

    func testTheURLKeyDocumentsBLE() {
        let text = ([ConfigKeys.url.doc] + ConfigKeys.url.details).joined(separator: "\n")
        XCTAssertTrue(text.contains("\"ble://HMSoft\""), text)
        XCTAssertTrue(text.contains("\"ble://C8:FD:19:12:34:56\""), text)
        for line in ConfigKeys.url.details where line.hasPrefix("  \"ble://") {
            let example = line.dropFirst(3).prefix { $0 != "\"" }
            XCTAssertNoThrow(try LinkURL(parsing: String(example)), String(example))
        }
    }
}
