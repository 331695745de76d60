import CEvdev
import DriveInputModel

/// Evdev code names from libevdev (`BTN_SOUTH` ↔ 1:304, `ABS_HAT0X` ↔ 3:16, `KEY_SPACE` ↔ 1:57).
public struct EventCodeNames: EventCodeResolver, Sendable {
    /// Every `EV_KEY` and `EV_ABS` name libevdev knows, in code order (keys first), asking libevdev for every
    /// code 0…`KEY_MAX` and 0…`ABS_MAX`.
    ///
    /// Built when asked, not at `init`: only an error message's "did you mean" reads it, and every start
    /// would otherwise pay for making all those strings.
    public var knownNames: [String] {
        var names: [String] = []
        for (type, maximum) in [(EvdevCode.evKey, EvdevCode.keyMax), (EvdevCode.evAbs, EvdevCode.absMax)] {
            for code in 0...UInt32(maximum) {
                if let name = libevdev_event_code_get_name(UInt32(type), code) { names.append(String(cString: name)) }
            }
        }
        return names
    }

    /// A resolver; it holds nothing (libevdev's tables are static).
    public init() {}

    /// The code for `name` (any libevdev name, aliases such as `BTN_A` included), or nil.
    public func code(named name: String) -> EventCode? {
        let type = libevdev_event_type_from_code_name(name)
        let code = libevdev_event_code_from_code_name(name)
        guard type >= 0, code >= 0 else { return nil }
        return EventCode(type: UInt16(type), code: UInt16(code))
    }

    /// libevdev's name for `code` (for aliased codes the canonical one, e.g. `BTN_SOUTH`).
    public func name(of code: EventCode) -> String? {
        libevdev_event_code_get_name(UInt32(code.type), UInt32(code.code)).map { String(cString: $0) }
    }

    /// libevdev's name of an event type (`EV_KEY`, `EV_ABS`), or nil.
    public func typeName(_ type: UInt16) -> String? {
        libevdev_event_type_get_name(UInt32(type)).map { String(cString: $0) }
    }
}
