import XCTest

@testable import DriveInput

/// SDL's GUID, its DB lookup and the translation of SDL indices back to evdev codes. Every expected
/// value below is worked out by hand from SDL's own source (libsdl-org/SDL, src/joystick/SDL_joystick.c
/// `SDL_CreateJoystickGUID`, src/stdlib/SDL_crc16.c, src/joystick/SDL_gamepad.c
/// `SDL_PrivateMatchGamepadMappingForGUID`/`SDL_PrivateGetGamepadMappingForGUID`,
/// src/joystick/linux/SDL_sysjoystick.c `ConfigJoystick`/`GuessIfAxesAreDigitalHat`), not from this
/// implementation; the reasoning is in the comments.
final class GameControllerDBTests: XCTestCase {
    // evdev codes (linux/input-event-codes.h).
    let btnTrigger: UInt16 = 0x120, btnThumb: UInt16 = 0x121, btnThumb2: UInt16 = 0x122, btnTop: UInt16 = 0x123
    let btnTop2: UInt16 = 0x124, btnPinkie: UInt16 = 0x125, btnBase: UInt16 = 0x126, btnBase2: UInt16 = 0x127
    let btnBase3: UInt16 = 0x128, btnBase4: UInt16 = 0x129, btnBase5: UInt16 = 0x12a, btnBase6: UInt16 = 0x12b
    let btnSouth: UInt16 = 0x130, btnEast: UInt16 = 0x131, btnNorth: UInt16 = 0x133, btnWest: UInt16 = 0x134
    let btnTL: UInt16 = 0x136, btnTR: UInt16 = 0x137, btnTL2: UInt16 = 0x138, btnTR2: UInt16 = 0x139
    let btnSelect: UInt16 = 0x13a, btnStart: UInt16 = 0x13b, btnMode: UInt16 = 0x13c
    let btnThumbL: UInt16 = 0x13d, btnThumbR: UInt16 = 0x13e
    let absX: UInt16 = 0, absY: UInt16 = 1, absZ: UInt16 = 2, absRX: UInt16 = 3, absRY: UInt16 = 4, absRZ: UInt16 = 5
    let absHat0X: UInt16 = 0x10, absHat0Y: UInt16 = 0x11

    let stick = AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128)
    let trigger = AbsInfo(minimum: 0, maximum: 255)
    let hat = AbsInfo(minimum: -1, maximum: 1)
    let byteAxis = AbsInfo(minimum: 0, maximum: 255, flat: 15)

    // MARK: GUID

    func testCRC16IsCRC16ARC() {
        // SDL_crc16 is the reflected 0xA001 polynomial from 0, i.e. CRC-16/ARC, whose published check
        // value (the CRC of "123456789") is 0xBB3D.
        XCTAssertEqual(SDLJoystickGUID.crc16(Array("123456789".utf8)), 0xBB3D)
        XCTAssertEqual(SDLJoystickGUID.crc16([]), 0)
    }

    func testGUIDOfAnXbox360PadAsSDLBuildsIt() {
        // SDL_CreateJoystickGUID(bus 3, 045e, 028e, version 0x0110, NULL, "Microsoft X-Box 360 pad", 0, 0):
        // little-endian words bus=0003, crc16(name), vendor=045e, 0, product=028e, 0, version=0110, 0.
        // crc16("Microsoft X-Box 360 pad") = 0xb881 (SDL_crc16 re-typed in Python); SDL-based tools
        // print this very GUID for xpad pads: 030081b85e0400008e02000010010000.
        let guid = SDLJoystickGUID(bustype: 3, vendor: 0x045e, product: 0x028e, version: 0x0110, name: "Microsoft X-Box 360 pad")
        XCTAssertEqual(guid.description, "030081b85e0400008e02000010010000")
        XCTAssertEqual(guid.crc, 0xb881)
        XCTAssertEqual(guid.with(crc: 0).description, "030000005e0400008e02000010010000")
        XCTAssertEqual(guid.with(version: 0).description, "030081b85e0400008e02000000000000")
        XCTAssertEqual(SDLJoystickGUID(hex: "030081B85E0400008E02000010010000"), guid)
        XCTAssertNil(SDLJoystickGUID(hex: "030081b85e0400008e0200001001000"))
        XCTAssertNil(SDLJoystickGUID(hex: "030081b85e0400008e0200001001000g"))
    }

    func testGUIDWithoutAVendorHoldsTheName() {
        // vendor 0: after bus and CRC, SDL_strlcpy copies the name into the 12 bytes left: 11 bytes + NUL.
        let guid = SDLJoystickGUID(bustype: 0x19, vendor: 0, product: 0, version: 0, name: "ABCDEFGHIJKLMNOP")
        XCTAssertEqual(Array(guid.bytes[4..<16]), Array("ABCDEFGHIJK".utf8) + [0])
        XCTAssertFalse(guid.usesVersion)
    }

    // MARK: parsing

    func testParsesModifiersAndSkipsOtherFields() throws {
        let mapping = try XCTUnwrap(GameControllerMapping.parse(line:
            "03000000790000001100000010010000,Retro Controller,a:b1,dpdown:+a1,dpleft:-a0,-leftx:b4,righty:a3~,dpup:h0.1,hint:!SDL_X:=1,misc2:b9,crc:7e45,platform:Linux,\r"))
        XCTAssertEqual(mapping.name, "Retro Controller")
        XCTAssertEqual(mapping.platform, "Linux")
        XCTAssertEqual(mapping.nameCRC, 0x7e45)
        XCTAssertEqual(mapping.bindings, [
            .init(element: .a, outputHalf: nil, input: .button(1)),
            .init(element: .dpdown, outputHalf: nil, input: .axis(1, half: .positive, inverted: false)),
            .init(element: .dpleft, outputHalf: nil, input: .axis(0, half: .negative, inverted: false)),
            .init(element: .leftx, outputHalf: .negative, input: .button(4)),
            .init(element: .righty, outputHalf: nil, input: .axis(3, half: nil, inverted: true)),
            .init(element: .dpup, outputHalf: nil, input: .hat(0, mask: 1)),
        ])
        XCTAssertNil(try GameControllerMapping.parse(line: "# Linux"))
        XCTAssertNil(try GameControllerMapping.parse(line: "   "))
        XCTAssertThrowsError(try GameControllerMapping.parse(line: "0300,Pad,a:b0,"))
        XCTAssertThrowsError(try GameControllerMapping.parse(line: "03000000790000001100000010010000,Pad,a:q0,"))
    }

    func testAddSkipsOtherPlatformsAndReportsBadLines() {
        var db = GameControllerDB()
        let problems = db.add(text: """
            # Windows
            03000000790000000600000000000000,Win pad,a:b0,platform:Windows,
            03000000790000000600000007010000,USB Gamepad,a:b2,platform:Linux,
            03000000790000000600000007010000,no platform,a:b3,
            nonsense
            """, source: .shipped)
        XCTAssertEqual(db.entries.map(\.mapping.name), ["USB Gamepad"])
        XCTAssertEqual(problems.map(\.line), [5])
        var fromEnvironment = GameControllerDB()
        fromEnvironment.add(text: "03000000790000000600000007010000,no platform,a:b3,", source: .environment, requirePlatform: false)
        XCTAssertEqual(fromEnvironment.entries.count, 1)
    }

    // MARK: lookup

    func testLookupFollowsSDLsOrder() {
        // SDL_PrivateGetGamepadMappingForGUID: (1) same GUID and version, the line's crc equal to the
        // device's; (2) same version, a line without crc; (3) and (4): the same without the version.
        let device = SDLJoystickGUID(bustype: 3, vendor: 0x0079, product: 0x0006, version: 0x0110, name: "Pad")
        var db = GameControllerDB()
        db.add(text: """
            03000000790000000600000007010000,other version,a:b0,platform:Linux,
            03000000790000000600000010010000,any name,a:b0,platform:Linux,
            03000000790000000600000010010000,other name,a:b0,crc:1234,platform:Linux,
            """, source: .shipped)
        XCTAssertEqual(db.entry(for: device)?.mapping.name, "any name", "(2): no line has this name's crc")
        db.add(text: "03000000790000000600000010010000,this name,a:b0,crc:\(String(device.crc, radix: 16)),platform:Linux,",
               source: .environment, requirePlatform: false)
        XCTAssertEqual(db.entry(for: device)?.mapping.name, "this name", "(1): an exact crc match beats a line without crc")
        XCTAssertEqual(db.entry(for: device)?.source, .environment)

        // Another version: nothing for 0x0111, so (4) ignores the version; the first line added wins.
        let other = SDLJoystickGUID(bustype: 3, vendor: 0x0079, product: 0x0006, version: 0x0111, name: "Pad")
        XCTAssertEqual(db.entry(for: other)?.mapping.name, "this name", "(3): crc match across versions")
        let otherName = SDLJoystickGUID(bustype: 3, vendor: 0x0079, product: 0x0006, version: 0x0111, name: "Pod")
        XCTAssertEqual(db.entry(for: otherName)?.mapping.name, "other version", "(4): first line without crc")

        // A later line with the same GUID and crc replaces the earlier one (SDL: same key, higher or equal priority).
        db.add(text: "03000000790000000600000010010000,user's,a:b1,platform:Linux,", source: .file("my.db"))
        XCTAssertEqual(db.entry(for: otherName.with(version: 0x0110))?.mapping.name, "user's")
        XCTAssertEqual(db.entries.count, 4)
        XCTAssertNil(db.entry(for: SDLJoystickGUID(bustype: 3, vendor: 0x0079, product: 0x0007, version: 0x0110, name: "Pad")))
    }

    // MARK: SDL indices → evdev codes

    /// Looks a pad up in `line` alone and returns its layout.
    private func layout(_ line: String, _ info: InputDeviceInfo) throws -> PadLayout {
        var db = GameControllerDB()
        XCTAssertEqual(db.add(text: line, source: .shipped), [])
        let guid = SDLJoystickGUID(bustype: info.bustype, vendor: info.vendor, product: info.product, version: info.version, name: info.name)
        let entry = try XCTUnwrap(db.entry(for: guid), "no entry for \(guid)")
        return PadLayout(mapping: entry.mapping, info: info, origin: .database(name: entry.mapping.name, source: entry.source, line: entry.line))
    }

    private func route(_ layout: PadLayout, _ element: StandardElement) -> PadLayout.Input? {
        layout.routes.first { $0.element == element }?.input
    }

    func testXbox360PadOnXpad() throws {
        // xpad's keys: BTN_A 0x130, BTN_B 0x131, BTN_X 0x133, BTN_Y 0x134, BTN_TL 0x136, BTN_TR 0x137,
        // BTN_SELECT 0x13a, BTN_START 0x13b, BTN_MODE 0x13c, BTN_THUMBL 0x13d, BTN_THUMBR 0x13e: all ≥
        // BTN_JOYSTICK, so SDL numbers them in code order: b0 A … b10 THUMBR. Axes X Y Z RX RY RZ and
        // HAT0X/HAT0Y (−1…1: a digital hat, so h0 and not an axis): a0 X, a1 Y, a2 Z, a3 RX, a4 RY, a5 RZ.
        // The DB's x:b2 is 0x133 (the kernel names it BTN_X = BTN_NORTH, but it is the west button on an
        // Xbox pad), so SDL's west button comes from 0x133 and its north (y:b3) from 0x134.
        let info = InputDeviceInfo(
            name: "Microsoft X-Box 360 pad", bustype: 3, vendor: 0x045e, product: 0x028e, version: 0x0110,
            keys: [btnSouth, btnEast, btnNorth, btnWest, btnTL, btnTR, btnSelect, btnStart, btnMode, btnThumbL, btnThumbR],
            axes: [absX: stick, absY: stick, absZ: trigger, absRX: stick, absRY: stick, absRZ: trigger, absHat0X: hat, absHat0Y: hat])
        let layout = try layout(
            "030000005e0400008e02000010010000,Xbox 360 Controller,a:b0,b:b1,back:b6,dpdown:h0.4,dpleft:h0.8,dpright:h0.2,dpup:h0.1,guide:b8,leftshoulder:b4,leftstick:b9,lefttrigger:a2,leftx:a0,lefty:a1,rightshoulder:b5,rightstick:b10,righttrigger:a5,rightx:a3,righty:a4,start:b7,x:b2,y:b3,platform:Linux,",
            info)
        XCTAssertEqual(route(layout, .a), .key(btnSouth))
        XCTAssertEqual(route(layout, .x), .key(0x133))
        XCTAssertEqual(route(layout, .y), .key(0x134))
        XCTAssertEqual(route(layout, .start), .key(btnStart))
        XCTAssertEqual(route(layout, .back), .key(btnSelect))
        XCTAssertEqual(route(layout, .guide), .key(btnMode))
        XCTAssertEqual(route(layout, .rightshoulder), .key(btnTR))
        XCTAssertEqual(route(layout, .rightstick), .key(btnThumbR))
        XCTAssertEqual(route(layout, .leftx), .axis(absX, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .righty), .axis(absRY, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .lefttrigger), .axis(absZ, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .righttrigger), .axis(absRZ, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .dpleft), .hat(0, mask: 8))
        XCTAssertEqual(layout.missing, [])
    }

    func testDualShock4OnHidSony() throws {
        // hid-sony (and hid-playstation) map the DS4 to the gamepad codes: SOUTH EAST NORTH WEST TL TR TL2 TR2
        // SELECT START MODE THUMBL THUMBR → b0…b12 in code order; axes X Y Z RX RY RZ → a0…a5; the hat (−1…1)
        // is h0. The pad says version 0x8111 over USB: GUID 030000004c050000c405000011810000 in the DB.
        // SDL's x (west) is b3 = 0x134 and y (north) b2 = 0x133; L2 is a2 = ABS_Z, R2 a5 = ABS_RZ.
        let info = InputDeviceInfo(
            name: "Sony Interactive Entertainment Wireless Controller", bustype: 3, vendor: 0x054c, product: 0x05c4,
            version: 0x8111,
            keys: [btnSouth, btnEast, btnNorth, btnWest, btnTL, btnTR, btnTL2, btnTR2, btnSelect, btnStart, btnMode, btnThumbL, btnThumbR],
            axes: [absX: byteAxis, absY: byteAxis, absZ: trigger, absRX: byteAxis, absRY: byteAxis, absRZ: trigger, absHat0X: hat, absHat0Y: hat])
        let layout = try layout(
            "030000004c050000c405000011810000,PS4 Controller,a:b0,b:b1,back:b8,dpdown:h0.4,dpleft:h0.8,dpright:h0.2,dpup:h0.1,guide:b10,leftshoulder:b4,leftstick:b11,lefttrigger:a2,leftx:a0,lefty:a1,rightshoulder:b5,rightstick:b12,righttrigger:a5,rightx:a3,righty:a4,start:b9,x:b3,y:b2,platform:Linux,",
            info)
        XCTAssertEqual(route(layout, .a), .key(btnSouth))
        XCTAssertEqual(route(layout, .x), .key(btnWest))
        XCTAssertEqual(route(layout, .y), .key(btnNorth))
        XCTAssertEqual(route(layout, .back), .key(btnSelect))
        XCTAssertEqual(route(layout, .start), .key(btnStart))
        XCTAssertEqual(route(layout, .guide), .key(btnMode))
        XCTAssertEqual(route(layout, .leftstick), .key(btnThumbL))
        XCTAssertEqual(route(layout, .rightstick), .key(btnThumbR))
        XCTAssertEqual(route(layout, .lefttrigger), .axis(absZ, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .rightx), .axis(absRX, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .righty), .axis(absRY, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .dpup), .hat(0, mask: 1))
    }

    /// A DragonRise "Generic USB Joystick" (0079:0006) as hid-generic reports it.
    static func dragonRiseInfo() -> InputDeviceInfo {
        let byteAxis = AbsInfo(minimum: 0, maximum: 255, flat: 15, value: 127)
        return InputDeviceInfo(
            name: "DragonRise Inc.   Generic   USB  Joystick  ", bustype: 3, vendor: 0x0079, product: 0x0006, version: 0x0110,
            keys: Set(0x120...0x12b),
            axes: [0: byteAxis, 1: byteAxis, 2: byteAxis, 3: byteAxis, 5: byteAxis,
                   0x10: AbsInfo(minimum: -1, maximum: 1), 0x11: AbsInfo(minimum: -1, maximum: 1)])
    }

    func testDragonRisePadOnHidGeneric() throws {
        // hid-generic gives it 12 buttons BTN_TRIGGER 0x120 … BTN_BASE6 0x12b (b0 … b11 in code order) and
        // axes X Y Z RX RZ plus HAT0X/HAT0Y (−1…1: digital, h0): a0 X, a1 Y, a2 Z, a3 RX, a4 RZ.
        // The device says version 0x0110; the DB has only 0x0107 (…07010000), which SDL reaches in its
        // version-less passes. a:b2 → BTN_THUMB2, b:b1 → BTN_THUMB, x:b3 → BTN_TOP, y:b0 → BTN_TRIGGER,
        // leftshoulder:b4 → BTN_TOP2, rightshoulder:b5 → BTN_PINKIE, lefttrigger:b6 → BTN_BASE,
        // righttrigger:b7 → BTN_BASE2, back:b8 → BTN_BASE3, start:b9 → BTN_BASE4, leftstick:b10 → BTN_BASE5,
        // rightstick:b11 → BTN_BASE6; rightx:a3 → ABS_RX, righty:a4 → ABS_RZ.
        let layout = try layout(
            "03000000790000000600000007010000,USB Gamepad,a:b2,b:b1,back:b8,dpdown:h0.4,dpleft:h0.8,dpright:h0.2,dpup:h0.1,leftshoulder:b4,leftstick:b10,lefttrigger:b6,leftx:a0,lefty:a1,rightshoulder:b5,rightstick:b11,righttrigger:b7,rightx:a3,righty:a4,start:b9,x:b3,y:b0,platform:Linux,",
            Self.dragonRiseInfo())
        XCTAssertEqual(route(layout, .a), .key(btnThumb2))
        XCTAssertEqual(route(layout, .b), .key(btnThumb))
        XCTAssertEqual(route(layout, .x), .key(btnTop))
        XCTAssertEqual(route(layout, .y), .key(btnTrigger))
        XCTAssertEqual(route(layout, .leftshoulder), .key(btnTop2))
        XCTAssertEqual(route(layout, .rightshoulder), .key(btnPinkie))
        XCTAssertEqual(route(layout, .lefttrigger), .key(btnBase))
        XCTAssertEqual(route(layout, .righttrigger), .key(btnBase2))
        XCTAssertEqual(route(layout, .back), .key(btnBase3))
        XCTAssertEqual(route(layout, .start), .key(btnBase4))
        XCTAssertEqual(route(layout, .leftstick), .key(btnBase5))
        XCTAssertEqual(route(layout, .rightstick), .key(btnBase6))
        XCTAssertEqual(route(layout, .leftx), .axis(absX, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .rightx), .axis(absRX, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .righty), .axis(absRZ, half: nil, inverted: false))
        XCTAssertEqual(route(layout, .dpright), .hat(0, mask: 2))
    }

    func testAnalogHatsAreAxesAndMissingIndicesAreReported() throws {
        // GuessIfAxesAreDigitalHat: a hat with fuzz/flat and a range beyond −1…1 is analog, so its axes
        // are numbered with the others: X a0, HAT0X a1, HAT0Y a2, and there is no h0.
        let analog = AbsInfo(minimum: -128, maximum: 127, fuzz: 2, flat: 4)
        let axes: [UInt16: AbsInfo] = [absX: stick, absHat0X: analog, absHat0Y: analog, 0x12: hat, 0x13: hat]
        XCTAssertEqual(PadLayout.sdlHats(axes: axes), [1])
        XCTAssertEqual(PadLayout.sdlAxes(axes: axes, digitalHats: [1]), [absX, absHat0X, absHat0Y])
        // Buttons: the ones from BTN_JOYSTICK up first, then keys below it (KEY_A 30 comes last).
        XCTAssertEqual(PadLayout.sdlButtons(keys: [30, btnSouth, btnTrigger, 0x2ff]), [btnTrigger, btnSouth, 30])
        let mapping = try XCTUnwrap(GameControllerMapping.parse(line: "03000000790000000600000007010000,P,a:b5,dpup:h0.1,leftx:a0,platform:Linux,"))
        let layout = PadLayout(mapping: mapping, info: InputDeviceInfo(name: "P", keys: [btnSouth], axes: axes), origin: .kernel)
        XCTAssertEqual(layout.missing, ["a:b5"])
        XCTAssertEqual(layout.routes.map(\.element), [.dpup, .leftx])
        XCTAssertEqual(route(layout, .dpup), .hat(1, mask: 1), "SDL's h0 is the first digital hat: HAT1")
    }
}
