import DriveLink
import XCTest

final class LineAssemblerTests: XCTestCase {
    func testLineFeedAndCarriageReturnLineFeed() {
        var assembler = LineAssembler()
        XCTAssertEqual(assembler.append(Array("OK\nBAT,87\r\n\n".utf8)), ["OK", "BAT,87", ""])
        XCTAssertFalse(assembler.hasPartialLine)
    }

    func testLinesSplitAcrossReads() {
        var assembler = LineAssembler()
        XCTAssertEqual(assembler.append(Array("BA".utf8)), [])
        XCTAssertEqual(assembler.append(Array("T,8".utf8)), [])
        XCTAssertEqual(assembler.append(Array("7\r".utf8)), [])
        XCTAssertEqual(assembler.append(Array("\nOK".utf8)), ["BAT,87"])
        XCTAssertTrue(assembler.hasPartialLine)
        XCTAssertEqual(assembler.finish(), "OK")
        XCTAssertEqual(assembler.finish(), nil)
    }

    func testLongLineIsCutAndMarkedAndTheRestDropped() {
        var assembler = LineAssembler()
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 3000)
        let lines = assembler.append(long[..<1500]) + assembler.append(long[1500...]) + assembler.append(Array("\nnext\n".utf8))
        XCTAssertEqual(lines, [String(repeating: "a", count: 1024) + "…[cut]", "next"])
    }

    func testLineOfExactlyOneKibibyteIsKeptWhole() {
        var assembler = LineAssembler()
        let exact = [UInt8](repeating: UInt8(ascii: "b"), count: 1024)
        XCTAssertEqual(assembler.append(exact + Array("\r\n".utf8)), [String(repeating: "b", count: 1024)])
        XCTAssertEqual(assembler.append(exact + Array("\n".utf8)), [String(repeating: "b", count: 1024)])
    }

    func testCutNeverSplitsACharacter() {
        var assembler = LineAssembler()
        let bytes = [UInt8](repeating: UInt8(ascii: "c"), count: 1023) + Array("é!".utf8) + [0x0A]
        XCTAssertEqual(assembler.append(bytes), [String(repeating: "c", count: 1023) + "…[cut]"])
    }

    func testInvalidUTF8AndControlsAreEscaped() {
        var assembler = LineAssembler()
        let bytes: [UInt8] = [0x4F, 0x4B, 0xFF, 0x20, 0xC3, 0xA9, 0x20, 0xE2, 0x82, 0x20, 0x1B, 0x5B, 0x09, 0xED, 0xA0, 0x80, 0x0A]
        XCTAssertEqual(assembler.append(bytes), ["OK\\xFF é \\xE2\\x82 \\x1B[\t\\xED\\xA0\\x80"])
    }

    func testFourByteCharactersSurvive() {
        var assembler = LineAssembler()
        XCTAssertEqual(assembler.append(Array("car 🚗 ok\n".utf8)), ["car 🚗 ok"])
    }
}
