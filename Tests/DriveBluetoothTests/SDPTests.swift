import DriveBluetooth
import XCTest

final class SDPTests: XCTestCase {
    /// What BlueZ's SDP server answers for an SPP profile registered on channel 3 (the attributes asked
    /// for: service class list, protocol descriptor list, name), wrapped in a response PDU.
    static let attributeLists: [UInt8] = [
        0x35, 0x29,                                      // DES: the records
        0x35, 0x27,                                      //   DES: one record
        0x09, 0x00, 0x01, 0x35, 0x03, 0x19, 0x11, 0x01,  //     0x0001: { UUID16 0x1101 }
        0x09, 0x00, 0x04, 0x35, 0x0C,                    //     0x0004: {
        0x35, 0x03, 0x19, 0x01, 0x00,                    //        { L2CAP }
        0x35, 0x05, 0x19, 0x00, 0x03, 0x08, 0x03,        //        { RFCOMM, uint8 3 } }
        0x09, 0x01, 0x00, 0x25, 0x09,                    //     0x0100: text(9)
    ] + Array("HC-05 SPP".utf8)

    static func response(_ part: [UInt8], transaction: UInt16, continuation: [UInt8] = []) -> [UInt8] {
        let body = [UInt8(part.count >> 8), UInt8(part.count & 0xFF)] + part + [UInt8(continuation.count)] + continuation
        return [0x07, UInt8(transaction >> 8), UInt8(transaction & 0xFF), UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    func testRequestPDU() {
        let pdu = SDP.searchAttributeRequest(transaction: 1, uuid16: 0x1101)
        XCTAssertEqual(pdu, [0x06, 0x00, 0x01, 0x00, 0x13,
                             0x35, 0x03, 0x19, 0x11, 0x01, 0xFF, 0xFF,
                             0x35, 0x09, 0x09, 0x00, 0x01, 0x09, 0x00, 0x04, 0x09, 0x01, 0x00, 0x00])
        let next = SDP.searchAttributeRequest(transaction: 2, uuid16: 0x1101, continuation: [0xAB, 0xCD])
        XCTAssertEqual(Array(next.suffix(3)), [0x02, 0xAB, 0xCD])
        XCTAssertEqual(Int(next[4]), next.count - 5)
    }

    func testSerialPortRecordGivesChannelAndName() throws {
        let (part, continuation) = try SDP.parseResponse(Self.response(Self.attributeLists, transaction: 7), transaction: 7)
        XCTAssertEqual(continuation, [])
        let records = try SDP.records(fromAttributeLists: part)
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(records[0].rfcommChannel, 3)
        XCTAssertEqual(records[0].name, "HC-05 SPP")
        XCTAssertEqual(records[0].serviceClasses.map(\.short), [0x1101])
        XCTAssertEqual(records[0].serviceClasses.first?.description, "00001101-0000-1000-8000-00805f9b34fb")
    }

    func testContinuationSplitsTheLists() throws {
        let first = Array(Self.attributeLists.prefix(20))
        let rest = Array(Self.attributeLists.dropFirst(20))
        let a = try SDP.parseResponse(Self.response(first, transaction: 1, continuation: [0x01, 0x02]), transaction: 1)
        XCTAssertEqual(a.continuation, [0x01, 0x02])
        let b = try SDP.parseResponse(Self.response(rest, transaction: 2), transaction: 2)
        XCTAssertEqual(try SDP.records(fromAttributeLists: a.part + b.part).first?.rfcommChannel, 3)
    }

    func testRecordWithoutRFCOMMAndOddForms() throws {
        // 128-bit UUID for RFCOMM, uint16 channel size, alternatives around the list, a 32-bit class UUID
        var rfcomm128: [UInt8] = [0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]
        let protocolList: [UInt8] = [0x3D, 0x19, 0x35, 0x17, 0x35, 0x03, 0x19, 0x01, 0x00, 0x35, 0x10 + 0x00] // placeholder
        _ = protocolList
        let rfcommDescriptor: [UInt8] = [0x35, 0x14, 0x1C] + rfcomm128 + [0x09, 0x00, 0x05]
        let list: [UInt8] = [0x3D, UInt8(5 + rfcommDescriptor.count + 2), 0x35, UInt8(5 + rfcommDescriptor.count),
                             0x35, 0x03, 0x19, 0x01, 0x00] + rfcommDescriptor
        let record: [UInt8] = [0x09, 0x00, 0x01, 0x35, 0x05, 0x1A, 0x00, 0x00, 0x11, 0x01, 0x09, 0x00, 0x04] + list
        let lists: [UInt8] = [0x35, UInt8(record.count + 2), 0x35, UInt8(record.count)] + record
        let parsed = try SDP.records(fromAttributeLists: lists)
        XCTAssertEqual(parsed.first?.rfcommChannel, 5)
        XCTAssertEqual(parsed.first?.serviceClasses.first?.short, 0x1101)
        rfcomm128[3] = 0x04
        // a record with only a service name has no channel
        let nameOnly: [UInt8] = [0x35, 0x0B, 0x35, 0x09, 0x09, 0x01, 0x00, 0x25, 0x04] + Array("Dev B".utf8.prefix(4))
        XCTAssertNil(try SDP.records(fromAttributeLists: nameOnly).first?.rfcommChannel)
    }

    func testMalformedInputIsAnErrorNotACrash() {
        XCTAssertThrowsError(try SDP.parseResponse([0x07, 0x00], transaction: 0))
        XCTAssertThrowsError(try SDP.parseResponse([0x01, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03], transaction: 1)) { error in
            XCTAssertTrue("\(error)".contains("SDP error 0x3"), "\(error)")
        }
        XCTAssertThrowsError(try SDP.parseResponse(Self.response(Self.attributeLists, transaction: 1), transaction: 2))
        XCTAssertThrowsError(try SDP.records(fromAttributeLists: [0x35, 0x10, 0x09]))
        XCTAssertThrowsError(try SDP.records(fromAttributeLists: [0x35, 0x03, 0x09, 0x00]))
        XCTAssertThrowsError(try SDP.records(fromAttributeLists: [0x09, 0x00, 0x01]))
        for cut in 0..<Self.attributeLists.count {
            _ = try? SDP.records(fromAttributeLists: Array(Self.attributeLists.prefix(cut)))
        }
    }
}
