import CSDBus
import Glibc

/// Reads and writes `DBusValue`s with sd-bus's non-variadic calls (`*_read_basic`, `*_enter_container`,
/// `*_append_basic`, `*_open_container`).
enum DBusCodec {
    private static func code(_ character: Character) -> CChar { CChar(bitPattern: character.asciiValue!) }

    /// Every remaining value of `message` (read from the start).
    static func readAll(_ message: OpaquePointer?) throws(DBusError) -> [DBusValue] {
        _ = sd_bus_message_rewind(message, 1)
        var values: [DBusValue] = []
        while let value = try read(message) { values.append(value) }
        return values
    }

    /// The next value of the current container, or nil at its end.
    static func read(_ message: OpaquePointer?) throws(DBusError) -> DBusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(message, &type, &contents)
        if peeked < 0 { throw DBusError(call: "sd_bus_message_peek_type", errno: peeked) }
        if peeked == 0 { return nil }
        func check(_ rc: Int32, _ what: String) throws(DBusError) {
            if rc < 0 { throw DBusError(call: what, errno: rc) }
        }
        func basic<T: BitwiseCopyable>(_ initial: T) throws(DBusError) -> T {
            var value = initial
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return value
        }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try basic(UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try basic(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try basic(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(Double(0)))
        case UInt8(ascii: "h"): return .unixFD(try basic(Int32(-1)))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let pointer: UnsafePointer<CChar>? = try basic(nil)
            let text = pointer.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "s"): return .string(text)
            case UInt8(ascii: "o"): return .objectPath(text)
            default: return .signature(text)
            }
        case UInt8(ascii: "a"), UInt8(ascii: "v"), UInt8(ascii: "r"), UInt8(ascii: "e"):
            let inner = contents.map { String(cString: $0) } ?? ""
            try check(sd_bus_message_enter_container(message, type, contents), "sd_bus_message_enter_container")
            var items: [DBusValue] = []
            while let item = try read(message) { items.append(item) }
            try check(sd_bus_message_exit_container(message), "sd_bus_message_exit_container")
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "a"): return .array(inner, items)
            case UInt8(ascii: "v"):
                guard let first = items.first else { throw DBusError(name: "carbridge.Error.BadMessage", message: "empty variant") }
                return .variant(first)
            case UInt8(ascii: "r"): return .structure(items)
            default:
                guard items.count == 2 else { throw DBusError(name: "carbridge.Error.BadMessage", message: "bad dict entry") }
                return .dictEntry(items[0], items[1])
            }
        default:
            throw DBusError(name: "carbridge.Error.BadMessage", message: "unsupported D-Bus type \(Character(Unicode.Scalar(UInt8(bitPattern: type))))")
        }
    }

    /// Appends `value` to `message`.
    static func append(_ value: DBusValue, to message: OpaquePointer?) throws(DBusError) {
        func check(_ rc: Int32) throws(DBusError) {
            if rc < 0 { throw DBusError(call: "sd_bus_message_append", errno: rc) }
        }
        func basic<T: BitwiseCopyable>(_ type: Character, _ initial: T) throws(DBusError) {
            var copy = initial
            try check(sd_bus_message_append_basic(message, code(type), &copy))
        }
        func container(_ type: Character, _ contents: String, _ items: [DBusValue]) throws(DBusError) {
            try check(sd_bus_message_open_container(message, code(type), contents))
            for item in items { try append(item, to: message) }
            try check(sd_bus_message_close_container(message))
        }
        switch value {
        case .byte(let v): try basic("y", v)
        case .bool(let v): try basic("b", Int32(v ? 1 : 0))
        case .int16(let v): try basic("n", v)
        case .uint16(let v): try basic("q", v)
        case .int32(let v): try basic("i", v)
        case .uint32(let v): try basic("u", v)
        case .int64(let v): try basic("x", v)
        case .uint64(let v): try basic("t", v)
        case .double(let v): try basic("d", v)
        case .unixFD(let v): try basic("h", v)
        case .string(let text), .objectPath(let text), .signature(let text):
            let type: Character
            switch value {
            case .string: type = "s"
            case .objectPath: type = "o"
            default: type = "g"
            }
            // For string types sd_bus_message_append_basic takes the string itself.
            let rc = text.withCString { sd_bus_message_append_basic(message, code(type), $0) }
            try check(rc)
        case .array(let element, let items): try container("a", element, items)
        case .bytes(let bytes):
            try check(bytes.withUnsafeBytes { sd_bus_message_append_array(message, code("y"), $0.baseAddress, $0.count) })
        case .variant(let inner): try container("v", inner.signature, [inner])
        case .structure(let fields): try container("r", fields.map(\.signature).joined(), fields)
        case .dictEntry(let key, let item): try container("e", key.signature + item.signature, [key, item])
        }
    }
}
