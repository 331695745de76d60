import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

/// A resolver with a handful of real evdev names and codes (libevdev backs the real one).
struct FakeResolver: EventCodeResolver {
    static let table: [(String, UInt16, UInt16)] = [
        ("BTN_SOUTH", 1, 304), ("BTN_EAST", 1, 305), ("BTN_NORTH", 1, 307), ("BTN_WEST", 1, 308),
        ("BTN_TL", 1, 310), ("BTN_TR", 1, 311), ("BTN_SELECT", 1, 314), ("BTN_START", 1, 315),
        ("BTN_MODE", 1, 316), ("KEY_SPACE", 1, 57), ("KEY_UP", 1, 103), ("KEY_DOWN", 1, 108), ("KEY_E", 1, 18),
        ("ABS_X", 3, 0), ("ABS_Y", 3, 1), ("ABS_RZ", 3, 5), ("ABS_HAT0X", 3, 16), ("ABS_HAT0Y", 3, 17),
        ("REL_X", 2, 0),
    ]

    func code(named name: String) -> EventCode? {
        Self.table.first { $0.0 == name }.map { EventCode(type: $0.1, code: $0.2) }
    }

    func name(of code: EventCode) -> String? {
        Self.table.first { $0.1 == code.type && $0.2 == code.code }?.0
    }

    var knownNames: [String] { Self.table.map(\.0) }
}

enum Codes {
    static let btnSouth: UInt16 = 304
    static let btnEast: UInt16 = 305
    static let btnNorth: UInt16 = 307
    static let btnWest: UInt16 = 308
    static let btnTL: UInt16 = 310
    static let btnTR: UInt16 = 311
    static let btnStart: UInt16 = 315
    static let absX: UInt16 = 0
    static let absY: UInt16 = 1
    static let absRZ: UInt16 = 5
    static let hat0X: UInt16 = 16
    static let hat0Y: UInt16 = 17
}

func ms(_ milliseconds: Int64) -> Instant { .milliseconds(milliseconds) }

/// The controls among mapped events (calibrations dropped).
func controls(_ events: [MappedEvent]) -> [Control] {
    events.compactMap { if case .control(let control) = $0 { return control } else { return nil } }
}

func assertClose(_ actual: Double?, _ expected: Double, accuracy: Double = 1e-9,
                 _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    guard let actual else { return XCTFail("nil, expected \(expected) \(message)", file: file, line: line) }
    XCTAssertEqual(actual, expected, accuracy: accuracy, message, file: file, line: line)
}

extension ControlMapper {
    /// `handle(_:role:into:)` into a fresh array, for tests that read one frame's events.
    mutating func handle(_ frame: InputFrame, role: DeviceRole) -> [MappedEvent] {
        var events: [MappedEvent] = []
        handle(frame, role: role, into: &events)
        return events
    }

    /// `tick(at:into:)` into a fresh array.
    mutating func tick(at now: Instant) -> [MappedEvent] {
        var events: [MappedEvent] = []
        tick(at: now, into: &events)
        return events
    }
}
