import CLinux
import XCTest

@testable import DriveInput

final class InputEventDecoderTests: XCTestCase {
    func testRecordSizeIsTheKernelStruct() {
        XCTAssertEqual(InputEventDecoder.recordSize, Int(cb_input_event_size()))
        #if arch(x86_64) || arch(arm64)
            XCTAssertEqual(InputEventDecoder.recordSize, 24)
        #endif
    }

    func testDecodesWholeRecords() {
        let events = [
            InputEvent(seconds: 12, microseconds: 345_678, type: 3, code: 0, value: -32768),
            InputEvent(seconds: 12, microseconds: 345_678, type: 1, code: 304, value: 1),
            InputEvent(seconds: 12, microseconds: 345_678, type: 0, code: 0, value: 0),
        ]
        var decoder = InputEventDecoder()
        XCTAssertEqual(decoder.decodeAll(InputEventDecoder.encode(events)), events)
        XCTAssertEqual(decoder.pendingByteCount, 0)
    }

    func testKeepsPartialRecordsAcrossReads() {
        let events = (0..<5).map { InputEvent(seconds: 1, microseconds: Int64($0), type: 3, code: 1, value: Int32($0 * 1000 - 2000)) }
        let bytes = InputEventDecoder.encode(events)
        var decoder = InputEventDecoder()
        var decoded: [InputEvent] = []
        // Odd chunk sizes split records at every possible place.
        var offset = 0
        for size in [1, 7, 16, 23, 24, 25, 3] where offset < bytes.count {
            let end = min(bytes.count, offset + size)
            decoded += decoder.decodeAll(Array(bytes[offset..<end]))
            offset = end
        }
        decoded += decoder.decodeAll(Array(bytes[offset...]))
        XCTAssertEqual(decoded, events)
        XCTAssertEqual(decoder.pendingByteCount, 0)
    }

    func testHalfARecordStaysPending() {
        var decoder = InputEventDecoder()
        let bytes = InputEventDecoder.encode(TestSupport.syn)
        XCTAssertEqual(decoder.decodeAll(Array(bytes[0..<10])), [])
        XCTAssertEqual(decoder.pendingByteCount, 10)
        XCTAssertEqual(decoder.decodeAll(Array(bytes[10...])), [TestSupport.syn])
    }
}

extension InputEventDecoder {
    /// Every complete record in `bytes`, collected into an array.
    fileprivate mutating func decodeAll(_ bytes: [UInt8]) -> [InputEvent] {
        var events: [InputEvent] = []
        bytes.withUnsafeBytes { raw in
            decode(raw) { event in
                events.append(event)
                return true
            }
        }
        return events
    }
}
