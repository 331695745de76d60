import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Glibc
import Logging
import XCTest

/// A pad's layout: the precedence of the `[buttons]` table, the user's DB, SDL's variable and the
/// built-in DB, and a generic DragonRise pad (hid-generic codes) driving with the default config
/// through the coordinator, fed real `input_event` bytes through a pipe on a manual loop.
final class PadLayoutTests: XCTestCase {
    /// A DragonRise "Generic USB Joystick" (0079:0006, version 0x0110) as hid-generic reports it:
    /// BTN_TRIGGER … BTN_BASE6, axes X Y Z RX RZ (0…255) and a −1…1 hat.
    private func dragonRise() -> InputDeviceInfo {
        let byteAxis = AbsInfo(minimum: 0, maximum: 255, flat: 15, value: 127)
        return InputDeviceInfo(
            name: "DragonRise Inc.   Generic   USB  Joystick  ", bustype: 3, vendor: 0x0079, product: 0x0006, version: 0x0110,
            keys: Set(0x120...0x12b),
            axes: [0: byteAxis, 1: byteAxis, 2: byteAxis, 3: byteAxis, 5: byteAxis,
                   0x10: AbsInfo(minimum: -1, maximum: 1), 0x11: AbsInfo(minimum: -1, maximum: 1)])
    }

    private let noEnvironment: (String) -> String? = { _ in nil }

    private func config(_ text: String = "") throws -> CarbridgeConfig {
        try CarbridgeConfig.parse(text: text, file: "test.toml", resolver: EventCodeNames())
    }

    private func key(_ code: UInt16, _ value: Int32) -> InputEvent { InputEvent(type: 1, code: code, value: value) }
    private func abs(_ code: UInt16, _ value: Int32) -> InputEvent { InputEvent(type: 3, code: code, value: value) }
    private let syn = InputEvent(type: 0, code: 0, value: 0)

    func testAGenericDragonRisePadDrivesWithTheDefaultConfig() throws {
        let loop = try makeManualLoop()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let coordinator = try InputCoordinator(config: try config(), loop: loop, logger: logger, environment: noEnvironment)
        var controls: [Control] = []
        var layouts: [PadLayout] = []
        coordinator.onControl = { controls.append($0) }
        coordinator.onLayout = { _, layout in layouts.append(layout) }
        let info = dragonRise()
        let pipe = try Syscall.pipe()
        defer { Syscall.close(pipe.write) }
        let reader = try RawEvdevReader(fd: pipe.read, loop: loop, absInfo: info.axes)
        try coordinator.attach(reader, role: .gamepad, name: info.name, info: info)
        defer { coordinator.stop() }
        guard case .database(let name, .shipped, _) = layouts.first?.origin else {
            return XCTFail("no DB layout: \(layouts)")
        }
        XCTAssertEqual(name, "USB Gamepad")

        // The DB line (USB Gamepad, 0079:0006): start:b9 = BTN_BASE4 (0x129), rightshoulder:b5 = BTN_PINKIE
        // (0x125), y:b0 = BTN_TRIGGER (0x120, north: gear), a:b2 = BTN_THUMB2 (0x122, south: f1),
        // leftx:a0 = ABS_X. The default table: BTN_START engine, BTN_TR speed_up, BTN_NORTH gear, BTN_SOUTH f1.
        func send(_ events: [InputEvent], until count: Int) throws {
            try Syscall.writeAll(pipe.write, InputEventDecoder.encode(events + [syn]))
            XCTAssertTrue(try spin(loop, timeout: .seconds(1)) { controls.count >= count }, "controls so far: \(controls)")
        }
        try send([key(0x129, 1)], until: 1)
        try send([key(0x129, 0), key(0x125, 1)], until: 2)
        try send([key(0x125, 0), key(0x120, 1)], until: 3)
        try send([key(0x120, 0), key(0x122, 1)], until: 4)
        try send([abs(0, 255)], until: 5)
        XCTAssertEqual(Array(controls.prefix(5)), [.engine, .speedUp, .gear, .function(1), .steer(90)])

        // The hat is the D-pad, the Z axis (not in the DB line) does nothing.
        let before = controls.count
        try Syscall.writeAll(pipe.write, InputEventDecoder.encode([abs(2, 255), syn, abs(0, 127), syn]))
        XCTAssertTrue(try spin(loop, timeout: .seconds(1)) { controls.count > before })
        XCTAssertEqual(controls.last, .steer(0), "only ABS_X moved the steering: \(controls)")
    }

    func testTheButtonsTableComesFirstAndTheUserDBBeforeTheEnvironmentAndTheShippedDB() throws {
        let pad = dragonRise()
        // [buttons]: the pad's own codes, no DB.
        let table = try PadLayoutResolver(config: try config("[buttons]\nBTN_BASE4 = \"engine\"\n"), environment: noEnvironment)
        XCTAssertEqual(table.resolve(pad).layout.origin, .buttonsTable)

        // The environment's line beats the shipped one (same GUID, no crc: replaced).
        let line = "03000000790000000600000007010000,Env pad,a:b0,start:b1,platform:Linux,"
        let environment = try PadLayoutResolver(config: try config(), environment: { $0 == "SDL_GAMECONTROLLERCONFIG" ? line : nil })
        XCTAssertEqual(environment.resolve(pad).layout.origin, .database(name: "Env pad", source: .environment, line: 1))
        XCTAssertEqual(environment.resolve(pad).layout.routes.first { $0.element == .start }?.input, .key(0x121))

        // The user's file beats both.
        let path = "/tmp/carbridge-pads-\(getpid()).db"
        try writeFile(path, "# mine\n03000000790000000600000007010000,File pad,start:b2,platform:Linux,\n")
        defer { unlink(path) }
        let file = try PadLayoutResolver(
            config: try config("[devices]\nmapping_db = \"\(path)\"\n"),
            environment: { $0 == "SDL_GAMECONTROLLERCONFIG" ? line : nil })
        XCTAssertEqual(file.resolve(pad).layout.origin, .database(name: "File pad", source: .file(path), line: 2))

        // A missing file is an error naming it.
        XCTAssertThrowsError(try PadLayoutResolver(config: try config("[devices]\nmapping_db = \"/nonexistent/x.db\"\n"), environment: noEnvironment)) {
            XCTAssertTrue("\($0)".contains("/nonexistent/x.db"), "\($0)")
        }

        // Nothing anywhere, no gamepad codes: the kernel's codes and a notice naming the monitor and the key.
        var unknown = pad
        unknown.vendor = 0x1234
        let shipped = try PadLayoutResolver(config: try config(), environment: noEnvironment)
        let resolution = shipped.resolve(unknown)
        XCTAssertEqual(resolution.layout.origin, .kernel)
        let notice = try XCTUnwrap(resolution.notice)
        XCTAssertTrue(notice.contains("carbridge monitor") && notice.contains("[buttons]"), notice)
        // A pad with the kernel's gamepad codes needs no notice.
        unknown.keys.insert(0x130)
        XCTAssertNil(shipped.resolve(unknown).notice)
        XCTAssertEqual(shipped.resolve(pad).layout.origin, .database(name: "USB Gamepad", source: .shipped, line: resolutionLine(pad)))
    }

    /// The line of the DragonRise's entry in the built-in DB (data/gamecontrollerdb.txt).
    private func resolutionLine(_ pad: InputDeviceInfo) -> Int {
        let lines = ShippedGameControllerDB.text.split(separator: "\n", omittingEmptySubsequences: false)
        return (lines.firstIndex { $0.hasPrefix("03000000790000000600000007010000,") } ?? -1) + 1
    }

    private func writeFile(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError(call: "open", errno: errno) }
        defer { close(fd) }
        try Syscall.writeAll(fd, Array(text.utf8))
    }
}
