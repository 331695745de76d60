/// One D-Bus value, as read from or written to a message.
///
/// Arrays carry their element signature (an empty array still has a type); a dictionary is an array of
/// `dictEntry`s (`a{sv}` is `.array("{sv}", [.dictEntry(.string(k), .variant(v)), …])`).
package indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(Int32)
    case array(String, [DBusValue])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)
    /// A byte array (`ay`) written in one call (`sd_bus_message_append_array`), not one value per byte:
    /// a frame written to a BLE car. Written only; a message read back has `.array("y", …)`.
    case bytes([UInt8])

    /// The value's D-Bus type signature.
    package var signature: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .array(let element, _): return "a" + element
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): return "{" + key.signature + value.signature + "}"
        case .variant: return "v"
        case .bytes: return "ay"
        }
    }

    /// `a{sv}` from a Swift dictionary (keys sorted, so the message is deterministic).
    package static func properties(_ values: [String: DBusValue]) -> DBusValue {
        .array("{sv}", values.keys.sorted().map { .dictEntry(.string($0), .variant(values[$0]!)) })
    }

    /// The value inside any number of variants.
    package var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// A string, object path or signature.
    package var string: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): return s
        default: return nil
        }
    }

    /// A boolean.
    package var bool: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    /// Any integer type, widened.
    package var integer: Int? {
        switch unwrapped {
        case .byte(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int64(let v): return Int(v)
        case .uint64(let v): return Int(exactly: v)
        default: return nil
        }
    }

    /// The elements of an array.
    package var elements: [DBusValue]? {
        switch unwrapped {
        case .array(_, let items): return items
        case .bytes(let bytes): return bytes.map { .byte($0) }
        default: return nil
        }
    }

    /// The strings of an `as`.
    package var strings: [String]? { elements?.compactMap(\.string) }

    /// An array of dict entries with string-like keys as a dictionary (`a{sv}`, `a{oa{sv}}`, …).
    package var dictionary: [String: DBusValue]? {
        guard let items = elements else { return nil }
        var out: [String: DBusValue] = [:]
        for item in items {
            guard case .dictEntry(let key, let value) = item, let name = key.string else { return nil }
            out[name] = value
        }
        return out
    }
}
