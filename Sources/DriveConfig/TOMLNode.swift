import CTOMLReader
import Glibc

/// One table, array or value of a `TOMLDocument`, with typed reads that give nil for another type.
struct TOMLNode {
    /// A node's TOML type.
    enum Kind {
        case table, array, string, integer, float, boolean, date, time, dateTime
        /// toml++'s "no type"; a parsed document has no such node.
        case none
    }

    /// Held so that `pointer` (owned by the document) stays valid.
    private let document: TOMLDocument
    private let pointer: OpaquePointer

    init(document: TOMLDocument, pointer: OpaquePointer) {
        self.document = document
        self.pointer = pointer
    }

    /// The node's TOML type.
    var kind: Kind {
        switch ctoml_node_type(pointer) {
        case CTOML_TABLE: .table
        case CTOML_ARRAY: .array
        case CTOML_STRING: .string
        case CTOML_INTEGER: .integer
        case CTOML_FLOATING_POINT: .float
        case CTOML_BOOLEAN: .boolean
        case CTOML_DATE: .date
        case CTOML_TIME: .time
        case CTOML_DATE_TIME: .dateTime
        default: .none
        }
    }

    /// The value of `key` when this is a table that has it.
    subscript(key: String) -> TOMLNode? {
        var key = key
        let found = key.withUTF8 { bytes in
            ctoml_table_get(pointer, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        return found.map { TOMLNode(document: document, pointer: $0) }
    }

    /// This node when it is a table.
    var table: TOMLNode? { kind == .table ? self : nil }

    /// A table's keys in toml++'s order (its tables are sorted maps: byte order), none for other types.
    var keys: [String] {
        let count = ctoml_table_count(pointer)
        guard count > 0 else { return [] }
        return [ctoml_string](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = ctoml_table_keys(pointer, buffer.baseAddress, count)
        }.map(Self.text)
    }

    /// A string value.
    var string: String? {
        var value = ctoml_string()
        return ctoml_node_string(pointer, &value) ? Self.text(value) : nil
    }

    /// An integer value.
    var int: Int? {
        var value: Int64 = 0
        return ctoml_node_integer(pointer, &value) ? Int(value) : nil
    }

    /// A floating-point value (not an integer: callers that accept both ask for both).
    var double: Double? {
        var value = 0.0
        return ctoml_node_floating_point(pointer, &value) ? value : nil
    }

    /// A boolean value.
    var bool: Bool? {
        var value = false
        return ctoml_node_boolean(pointer, &value) ? value : nil
    }

    /// The text of a string or key up to its first NUL (a `\u0000` escape): TOMLKit, the reader before
    /// this one, handed strings over as C strings, and the config's values and messages stay as they were.
    private static func text(_ string: ctoml_string) -> String {
        guard let data = string.data, string.length > 0 else { return "" }
        let length = memchr(data, 0, string.length).map { UnsafeRawPointer($0) - UnsafeRawPointer(data) } ?? string.length
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
