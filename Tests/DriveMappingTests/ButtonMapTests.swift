import DriveCore
import DriveMapping
import XCTest

final class ButtonMapTests: XCTestCase {
    let resolver = FakeResolver()

    private func parseError(
        _ bindings: [ButtonMap.Binding], longPress: [ButtonMap.Binding] = [],
        file: StaticString = #filePath, line: UInt = #line
    ) -> ButtonMapError? {
        do {
            _ = try ButtonMap.parse(bindings: bindings, longPress: longPress, resolver: resolver)
            XCTFail("accepted \(bindings) / \(longPress)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testParsesGoodBindings() throws {
        let map = try ButtonMap.parse(
            bindings: [
                ("BTN_START", "engine", 1), ("BTN_TR", "speed_up", 2), ("BTN_TL", "speed_down", 3),
                ("BTN_SOUTH", "gear", 4), ("btn_north", "F1", 5), ("KEY_SPACE", "deadman", 6),
                ("ABS_HAT0X-", "f2", 7), ("ABS_HAT0X+", "f3", 8), ("ABS_HAT0Y-", "f4", 9), ("ABS_HAT0Y+", "f5", 10),
            ],
            longPress: [("BTN_SOUTH", "calibrate", 11)],
            resolver: resolver)
        XCTAssertEqual(map.shortPress[.key(Codes.btnStart)], .engine)
        XCTAssertEqual(map.shortPress[.key(Codes.btnTR)], .speedUp)
        XCTAssertEqual(map.shortPress[.key(Codes.btnTL)], .speedDown)
        XCTAssertEqual(map.shortPress[.key(Codes.btnSouth)], .gear)
        XCTAssertEqual(map.shortPress[.key(Codes.btnNorth)], .f1, "names and actions are case-insensitive")
        XCTAssertEqual(map.shortPress[.key(57)], .deadman)
        XCTAssertEqual(map.shortPress[.axisDirection(code: Codes.hat0X, positive: false)], .f2)
        XCTAssertEqual(map.shortPress[.axisDirection(code: Codes.hat0X, positive: true)], .f3)
        XCTAssertEqual(map.shortPress[.axisDirection(code: Codes.hat0Y, positive: false)], .f4)
        XCTAssertEqual(map.shortPress[.axisDirection(code: Codes.hat0Y, positive: true)], .f5)
        XCTAssertEqual(map.longPress[.key(Codes.btnSouth)], .calibrate)
        XCTAssertEqual(map.boundAxisCodes, [Codes.hat0X, Codes.hat0Y])
    }

    func testUnknownNameSuggestsTheClosest() {
        let error = parseError([("BTN_SOTH", "gear", 12)])
        XCTAssertEqual(error?.reason, .unknownButton(name: "BTN_SOTH", suggestion: "BTN_SOUTH"))
        XCTAssertEqual(error?.line, 12)
        XCTAssertEqual(error?.description, "line 12: unknown button name \"BTN_SOTH\" (did you mean \"BTN_SOUTH\"?)")
    }

    func testUnknownHatDirectionSuggestsAHatDirection() {
        let error = parseError([("ABS_HAT0Z-", "f1", nil)])
        XCTAssertEqual(error?.reason, .unknownButton(name: "ABS_HAT0Z-", suggestion: "ABS_HAT0X-"))
        XCTAssertEqual(error?.description.hasPrefix("unknown button name \"ABS_HAT0Z-\""), true)
    }

    func testHopelessNameGetsNoSuggestionButAHint() {
        let error = parseError([("JOYSTICK_FIRE_BUTTON", "gear", 3)])
        XCTAssertEqual(error?.reason, .unknownButton(name: "JOYSTICK_FIRE_BUTTON", suggestion: nil))
        XCTAssertEqual(error?.description.contains("BTN_SOUTH"), true, error?.description ?? "")
    }

    func testAxisWithoutDirectionAndNonButtons() {
        XCTAssertEqual(parseError([("ABS_HAT0X", "f1", 1)])?.reason, .axisWithoutDirection(name: "ABS_HAT0X"))
        XCTAssertEqual(
            parseError([("ABS_HAT0X", "f1", 1)])?.description,
            "line 1: \"ABS_HAT0X\" is an axis; bind one of its directions: \"ABS_HAT0X-\" or \"ABS_HAT0X+\"")
        XCTAssertEqual(parseError([("REL_X", "f1", 2)])?.reason, .notAButton(name: "REL_X"))
        XCTAssertEqual(parseError([("BTN_SOUTH+", "f1", 2)])?.reason, .unknownButton(name: "BTN_SOUTH+", suggestion: "BTN_SOUTH"))
    }

    func testUnknownActionListsTheValidOnes() {
        let error = parseError([("BTN_SOUTH", "spede_up", 4)])
        XCTAssertEqual(error?.reason, .unknownAction(action: "spede_up", button: "BTN_SOUTH", suggestion: "speed_up"))
        let text = error?.description ?? ""
        XCTAssertTrue(text.hasPrefix("line 4: unknown action \"spede_up\" for button \"BTN_SOUTH\" (did you mean \"speed_up\"?)"), text)
        XCTAssertTrue(
            text.hasSuffix("valid actions: engine, speed_up, speed_down, gear, f1, f2, f3, f4, f5, deadman, calibrate"), text)
        XCTAssertEqual(parseError([("BTN_SOUTH", "launch_missiles", 4)])?.reason,
                       .unknownAction(action: "launch_missiles", button: "BTN_SOUTH", suggestion: nil))
    }

    func testUnknownLongPressEntries() {
        XCTAssertEqual(parseError([], longPress: [("BTN_WESTT", "gear", 9)])?.reason,
                       .unknownButton(name: "BTN_WESTT", suggestion: "BTN_WEST"))
        XCTAssertEqual(parseError([], longPress: [("BTN_WEST", "geer", 9)])?.reason,
                       .unknownAction(action: "geer", button: "BTN_WEST", suggestion: "gear"))
    }

    func testDuplicatesAndDeadmanLongPressAreRejected() {
        let duplicate = parseError([("BTN_SOUTH", "gear", 2), ("btn_south", "engine", 5)])
        XCTAssertEqual(duplicate?.reason, .duplicate(name: "btn_south", firstLine: 2))
        XCTAssertEqual(duplicate?.line, 5)
        XCTAssertEqual(parseError([], longPress: [("BTN_EAST", "deadman", 1)])?.reason, .deadmanWithLongPress(name: "BTN_EAST"))
        XCTAssertEqual(parseError([("BTN_EAST", "deadman", 1)], longPress: [("BTN_EAST", "gear", 2)])?.reason,
                       .deadmanWithLongPress(name: "BTN_EAST"))
    }

    func testButtonActionControls() {
        XCTAssertEqual(ButtonAction.f3.control, .function(3))
        XCTAssertEqual(ButtonAction.speedDown.control, .speedDown)
        XCTAssertNil(ButtonAction.deadman.control)
        XCTAssertNil(ButtonAction.calibrate.control)
        XCTAssertEqual(ButtonAction(rawValue: "speed_down"), .speedDown)
        XCTAssertTrue(ButtonAction.speedUp.repeats)
        XCTAssertFalse(ButtonAction.gear.repeats)
    }
}
