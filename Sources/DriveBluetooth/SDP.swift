/// The Service Discovery Protocol as far as carbridge needs it: one `ServiceSearchAttributeRequest`
/// for the Serial Port class (0x1101) and the parse of the records that come back (Bluetooth Core
/// spec, vol 3 part B). Pure: bytes in, values out; `SDPClient` does the socket.

/// A 128-bit UUID; 16- and 32-bit SDP UUIDs are widened with the Bluetooth base UUID.
package struct SDPUUID: Hashable, Sendable, CustomStringConvertible {
    package var bytes: [UInt8]

    static let base: [UInt8] = [0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    package init(short value: UInt32) {
        var bytes = Self.base
        bytes[0] = UInt8(value >> 24)
        bytes[1] = UInt8((value >> 16) & 0xFF)
        bytes[2] = UInt8((value >> 8) & 0xFF)
        bytes[3] = UInt8(value & 0xFF)
        self.bytes = bytes
    }

    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// The 16/32-bit value when this is a base UUID.
    package var short: UInt32? {
        guard Array(bytes[4...]) == Array(Self.base[4...]) else { return nil }
        return UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
    }

    package var description: String {
        let hex = bytes.map { byte -> String in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

/// One SDP data element.
package indirect enum SDPElement: Equatable, Sendable {
    case null
    case unsigned(UInt64)
    case signed(Int64)
    case uuid(SDPUUID)
    case text(String)
    case bool(Bool)
    case sequence([SDPElement])
    case alternative([SDPElement])
    case url(String)

    var children: [SDPElement]? {
        switch self {
        case .sequence(let items), .alternative(let items): return items
        default: return nil
        }
    }
}

/// A malformed SDP PDU or element.
package struct SDPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    package var description: String
    init(_ text: String) { description = text }
}

/// One service record: its attributes by id.
package struct SDPRecord: Equatable, Sendable {
    package var attributes: [UInt16: SDPElement]

    package static let serviceClassIDList: UInt16 = 0x0001
    package static let protocolDescriptorList: UInt16 = 0x0004
    package static let serviceName: UInt16 = 0x0100
    static let rfcommProtocol: UInt32 = 0x0003

    /// The record from its attribute list (a sequence of id, value pairs).
    package init(_ element: SDPElement) throws(SDPParseError) {
        guard case .sequence(let items) = element, items.count % 2 == 0 else {
            throw SDPParseError("a service record is not a sequence of attribute id/value pairs")
        }
        var attributes: [UInt16: SDPElement] = [:]
        var index = 0
        while index < items.count {
            guard case .unsigned(let id) = items[index], id <= 0xFFFF else { throw SDPParseError("attribute id is not a uint16") }
            attributes[UInt16(id)] = items[index + 1]
            index += 2
        }
        self.attributes = attributes
    }

    /// The service name (0x0100), if any.
    package var name: String? {
        if case .text(let text) = attributes[Self.serviceName] { return text }
        return nil
    }

    /// The service classes (0x0001).
    package var serviceClasses: [SDPUUID] {
        (attributes[Self.serviceClassIDList]?.children ?? []).compactMap {
            if case .uuid(let uuid) = $0 { return uuid }
            return nil
        }
    }

    /// The RFCOMM server channel from the protocol descriptor list (0x0004): the element after the
    /// RFCOMM UUID (0x0003) in its protocol descriptor; alternatives are searched in order.
    package var rfcommChannel: Int? {
        guard let list = attributes[Self.protocolDescriptorList] else { return nil }
        return Self.findRFCOMM(in: list)
    }

    private static func findRFCOMM(in element: SDPElement) -> Int? {
        guard let items = element.children else { return nil }
        if items.count >= 2, case .uuid(let uuid) = items[0], uuid.short == rfcommProtocol,
           case .unsigned(let channel) = items[1], (1...30).contains(channel) {
            return Int(channel)
        }
        for item in items {
            if let channel = findRFCOMM(in: item) { return channel }
        }
        return nil
    }
}

package enum SDP {
    static let serviceSearchAttributeRequest: UInt8 = 0x06
    static let serviceSearchAttributeResponse: UInt8 = 0x07
    static let errorResponse: UInt8 = 0x01
    /// The Serial Port service class.
    package static let serialPort: UInt16 = 0x1101

    /// A `ServiceSearchAttributeRequest` for service class `uuid16`, asking for the service class list,
    /// the protocol descriptor list and the name; `continuation` from the previous response (empty first).
    package static func searchAttributeRequest(transaction: UInt16, uuid16: UInt16, continuation: [UInt8] = []) -> [UInt8] {
        var parameters: [UInt8] = [0x35, 0x03, 0x19, UInt8(uuid16 >> 8), UInt8(uuid16 & 0xFF)]  // DES { UUID16 }
        parameters += [0xFF, 0xFF]  // maximum attribute byte count: the server splits by its MTU anyway
        parameters += [0x35, 0x09, 0x09, 0x00, 0x01, 0x09, 0x00, 0x04, 0x09, 0x01, 0x00]  // DES { 0x0001, 0x0004, 0x0100 }
        parameters.append(UInt8(continuation.count))
        parameters += continuation
        return [serviceSearchAttributeRequest, UInt8(transaction >> 8), UInt8(transaction & 0xFF),
                UInt8(parameters.count >> 8), UInt8(parameters.count & 0xFF)] + parameters
    }

    /// One response PDU: its part of the attribute lists and the continuation state (empty when done).
    package static func parseResponse(_ pdu: [UInt8], transaction: UInt16) throws(SDPParseError) -> (part: [UInt8], continuation: [UInt8]) {
        guard pdu.count >= 5 else { throw SDPParseError("SDP response shorter than its header") }
        let id = UInt16(pdu[1]) << 8 | UInt16(pdu[2])
        let length = Int(pdu[3]) << 8 | Int(pdu[4])
        guard id == transaction else { throw SDPParseError("SDP response for transaction \(id), expected \(transaction)") }
        guard pdu.count >= 5 + length else { throw SDPParseError("SDP response shorter than its parameter length") }
        let body = Array(pdu[5..<(5 + length)])
        if pdu[0] == errorResponse {
            let code = body.count >= 2 ? Int(body[0]) << 8 | Int(body[1]) : -1
            throw SDPParseError("the device answered with SDP error 0x\(String(code, radix: 16))")
        }
        guard pdu[0] == serviceSearchAttributeResponse else { throw SDPParseError("unexpected SDP PDU 0x\(String(pdu[0], radix: 16))") }
        guard body.count >= 3 else { throw SDPParseError("SDP response without attribute lists") }
        let count = Int(body[0]) << 8 | Int(body[1])
        guard body.count >= 2 + count + 1 else { throw SDPParseError("SDP attribute lists longer than the response") }
        let part = Array(body[2..<(2 + count)])
        let stateLength = Int(body[2 + count])
        guard stateLength <= 16, body.count >= 3 + count + stateLength else { throw SDPParseError("bad SDP continuation state") }
        return (part, Array(body[(3 + count)..<(3 + count + stateLength)]))
    }

    /// The records of the complete attribute lists (a sequence of records).
    package static func records(fromAttributeLists bytes: [UInt8]) throws(SDPParseError) -> [SDPRecord] {
        var offset = 0
        let element = try parseElement(bytes, at: &offset)
        guard case .sequence(let records) = element else { throw SDPParseError("SDP attribute lists are not a sequence") }
        var out: [SDPRecord] = []
        for record in records { out.append(try SDPRecord(record)) }
        return out
    }

    /// Parses one data element at `offset` and moves past it.
    package static func parseElement(_ bytes: [UInt8], at offset: inout Int) throws(SDPParseError) -> SDPElement {
        guard offset < bytes.count else { throw SDPParseError("SDP data element past the end") }
        let header = bytes[offset]
        offset += 1
        let type = header >> 3
        let sizeIndex = header & 0x07
        func take(_ count: Int) throws(SDPParseError) -> ArraySlice<UInt8> {
            guard count >= 0, offset + count <= bytes.count else { throw SDPParseError("SDP data element longer than the data") }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }
        func number(_ slice: ArraySlice<UInt8>) -> UInt64 { slice.reduce(0) { $0 << 8 | UInt64($1) } }
        var length: Int
        switch sizeIndex {
        case 0...4: length = type == 0 ? 0 : [1, 2, 4, 8, 16][Int(sizeIndex)]
        case 5: length = Int(number(try take(1)))
        case 6: length = Int(number(try take(2)))
        default: length = Int(number(try take(4)))
        }
        switch type {
        case 0: return .null
        case 1:
            guard length <= 8 else { _ = try take(length); return .unsigned(0) }  // 128-bit: not needed
            return .unsigned(number(try take(length)))
        case 2:
            guard length <= 8 else { _ = try take(length); return .signed(0) }
            let raw = number(try take(length))
            let shift = UInt64(64 - 8 * length)
            return .signed(Int64(bitPattern: raw << shift) >> Int64(shift))
        case 3:
            let raw = Array(try take(length))
            switch raw.count {
            case 2, 4: return .uuid(SDPUUID(short: UInt32(number(raw[...]))))
            case 16: return .uuid(SDPUUID(bytes: raw))
            default: throw SDPParseError("SDP UUID of \(raw.count) bytes")
            }
        case 4, 8:
            var text = Array(try take(length))
            if let nul = text.firstIndex(of: 0) { text = Array(text[..<nul]) }
            let string = String(decoding: text, as: UTF8.self)
            return type == 4 ? .text(string) : .url(string)
        case 5:
            return .bool(number(try take(length)) != 0)
        case 6, 7:
            let end = offset + length
            guard end <= bytes.count else { throw SDPParseError("SDP sequence longer than the data") }
            var items: [SDPElement] = []
            while offset < end { items.append(try parseElement(bytes, at: &offset)) }
            guard offset == end else { throw SDPParseError("SDP sequence element crosses its end") }
            return type == 6 ? .sequence(items) : .alternative(items)
        default:
            throw SDPParseError("unknown SDP data element type \(type)")
        }
    }
}
