import DriveConfig
import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

/// `check-config` and `run --config` report every problem of a file, like a compiler.
final class AllErrorsTests: XCTestCase {
    private func errors(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [ConfigError] {
        do {
            _ = try CarbridgeConfig.load(text: text, file: "my.toml")
            XCTFail("no error", file: file, line: line)
            return []
        } catch {
            return error.errors
        }
    }

    func testThreeMistakesInThreeTablesAreAllReportedInFileOrder() {
        let text = """
            # three mistakes
            [buttons]
            BTN_SOTH = "f1"

            [drive]
            max_speed = 125

            [steering]
            tilt_axes = "x,x"
            """
        let found = errors(text)
        XCTAssertEqual(found.map(\.description), [
            "my.toml:3: buttons.BTN_SOTH: unknown button name \"BTN_SOTH\" (did you mean \"BTN_SOUTH\"?)",
            "my.toml:6: drive.max_speed: 125 is not a multiple of 10 (speeds go in steps of 10)",
            "my.toml:9: steering.tilt_axes: \"x,x\" must name two different axes, e.g. \"x,z\" or \"-y,z\"",
        ])
        // One line each, in file order.
        XCTAssertThrowsError(try CarbridgeConfig.load(text: text, file: "my.toml")) { error in
            XCTAssertEqual("\(error)".split(separator: "\n").count, 3)
        }
        // `parse` throws the first of them.
        XCTAssertThrowsError(try CarbridgeConfig.parse(text: text, file: "my.toml")) { error in
            XCTAssertEqual((error as? ConfigError)?.line, 3)
        }
    }

    func testABluetoothAddressPinsAPadAndAnEmptyUniqIsAnError() throws {
        let config = try CarbridgeConfig.load(text: "[devices]\ngamepad = \"E4:17:D8:3A:9C:01\"\n", file: "my.toml")
        XCTAssertEqual(config.devices.gamepad, .unique("e4:17:d8:3a:9c:01"))
        let found = errors("[devices]\naccelerometer = \"auto\"\ngamepad = \"uniq:\"\n")
        XCTAssertEqual(found.map(\.line), [3])
        XCTAssertEqual(found.first?.key, "devices.gamepad")
        XCTAssertTrue(found.first?.message.contains("Bluetooth address") ?? false, "\(found)")
    }

    func testEveryKeyOfOneTableAndEveryUnknownKeyIsReported() {
        let found = errors("""
            [link]
            url = "tcp://nohost"
            terminator = "cr"
            max_in_flight = 0
            colour = "red"
            [keyboard]
            enabled = 1
            speed = 3
            [drvie]
            x = 1
            """)
        XCTAssertEqual(found.map(\.line), [2, 3, 4, 5, 7, 8, 9])
        XCTAssertEqual(found.map(\.key), [
            "link.url", "link.terminator", "link.max_in_flight", "link.colour", "keyboard.enabled", "keyboard.speed", "drvie",
        ])
        XCTAssertTrue(found[3].message.hasPrefix("unknown key in [link]; known keys: "), found[3].message)
        XCTAssertTrue(found[6].message.hasPrefix("unknown key at the top level"), found[6].message)
    }

    func testEveryBadBindingAndAxisIsReported() {
        let found = errors("""
            [steering]
            mode = "polar"
            axis_x = "ABS_XX"
            axis_y = "ABS_YY"
            [throttle]
            axis = "BTN_TR2"
            [buttons]
            BTN_SOTH = "f1"
            BTN_START = "jump"
            BTN_EAST = "gear"
            btn_east = "f2"
            [buttons.long_press]
            BTN_SELEKT = "engine"
            BTN_MODE = 3
            """)
        XCTAssertEqual(found.map(\.key), [
            "steering.axis_x", "steering.axis_y", "throttle.axis", "buttons.BTN_SOTH", "buttons.BTN_START",
            "buttons.btn_east", "buttons.long_press.BTN_SELEKT", "buttons.long_press.BTN_MODE",
        ])
        XCTAssertEqual(found.map(\.line), [3, 4, 6, 8, 9, 11, 13, 14])
        XCTAssertTrue(found[4].message.hasPrefix("unknown action \"jump\"; actions are engine, speed_up"), found[4].message)
        XCTAssertTrue(found[5].message.contains("bound twice (first bound on line 10)"), found[5].message)
        XCTAssertEqual(found[7].message, "expected a string, found an integer")
    }

    func testLongPressThatIsNotATableIsOneError() {
        let found = errors("[buttons]\nBTN_START = \"engine\"\nlong_press = \"gear\"\n")
        XCTAssertEqual(found.map(\.description), [
            "my.toml:3: buttons.long_press: expected a table ([buttons.long_press]), found a string",
        ])
    }

    func testASyntaxErrorIsTheOnlyError() {
        let found = errors("[drive]\nmax_speed = 125\nx = = 3\n")
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.line, 3)
        XCTAssertTrue(found.first?.message.hasPrefix("TOML syntax error") ?? false)
    }

    func testAStickAxisIsOnlyAnErrorWhenTheStickSteers() throws {
        let config = try CarbridgeConfig.load(text: "[steering]\nsource = \"tilt\"\naxis_x = \"ABS_XX\"\n", file: "my.toml")
        XCTAssertNil(config.mapping.stickAxisCodes)
        XCTAssertNotNil(config.mapperSettings.tilt)
        XCTAssertEqual(errors("[steering]\naxis_x = \"ABS_XX\"\n").map(\.key), ["steering.axis_x"])
    }

    func testUnreadableFileIsOneErrorWithoutALine() {
        XCTAssertThrowsError(try CarbridgeConfig.load(file: "/nonexistent/my.toml", resolver: NoNames())) { error in
            XCTAssertEqual("\(error)", "/nonexistent/my.toml: cannot read the config file (no such file)")
        }
    }
}

/// A resolver that knows no names.
struct NoNames: EventCodeResolver {
    func code(named name: String) -> EventCode? { nil }
    func name(of code: EventCode) -> String? { nil }
    var knownNames: [String] { [] }
}
