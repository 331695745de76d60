import Foundation
import XCTest

@testable import DriveInput

/// The byte parser (`EvemuRecording.parse`) against the former `Character` parser (`parseByCharacters`):
/// the same recording or the same error (line and message) for the fixtures and for many mutations of them.
final class EvemuByteParserTests: XCTestCase {
    private enum Outcome: Equatable {
        case parsed(EvemuRecording)
        case failed(String)
    }

    private func outcome(_ parse: (String) throws -> EvemuRecording, _ text: String) -> Outcome {
        do { return .parsed(try parse(text)) } catch { return .failed("\(error)") }
    }

    private func assertSame(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = outcome(EvemuRecording.parse, text)
        let characters = outcome(EvemuRecording.parseByCharacters, text)
        if bytes != characters {
            XCTFail("\(bytes) ≠ \(characters) for \(text.debugDescription)", file: file, line: line)
        }
    }

    func testFixturesParseTheSame() throws {
        for name in ["xbox360-pad", "dualsense-motion", "malformed-event", "malformed-header", "malformed-truncated"] {
            let text = try String(contentsOfFile: TestSupport.fixtureURL("\(name).evemu").path, encoding: .utf8)
            assertSame(text)
            assertSame(text.replacingOccurrences(of: "\n", with: "\r\n"))
        }
    }

    func testEdgeCasesParseTheSame() {
        let header = "N: pad\nI: 0003 045e 028e 0114\n"
        let events = [
            "E: 0.000001 0003 0000 -1234", "E: 0.000001 0003 0000 +12", "E: 0.1 +3 -0 5", "E: 0.1 3 -1 5",
            "E: 1.1234567 0003 0000 1", "E: 1..1 3 0 1", "E: .1 3 0 1", "E: 1. 3 0 1", "E: 1.2.3 3 0 1",
            "E: 99999999999999999999.1 3 0 1", "E: 9223372036854.775807 3 0 1", "E: 9300000000000.0 3 0 1",
            "E: 0.1 3 0 2147483648", "E: 0.1 3 0 -2147483648", "E: 0.1 10000 0 1", "E: 0.1 ffff FFFF 1",
            "E: 0.1 3 0 1 # comment", "E: 0.1\t3\t0\t1", "E: 0.1 3 0", "E: 0.1 3 0 1 2", "E:0.1 3 0 1",
            "E: 0.1 3 0 1\r", "E: 0.1 3 0 1\r\r", "E: 0.1 3 0 x", "E: 0.1 g 0 1", "E: 0.1 3 0 +", "E: 0.1 3 0 -",
            "E: ０.1 3 0 1", "E: 0.1 3 0 1 # é", "E: 0.1 3 0 1é", "E:", "E", "  ", "\t", "# c", "#\u{301} x",
            "A: 00 -32768 32767 16 128 0", "B: 01 00 00 00 00 00 00 00 01", "X: 1",
        ]
        assertSame("")
        assertSame("\n")
        assertSame("N: pad")
        assertSame("N: pad\n")
        assertSame("N: pad\r\nI: 1 2 3 4\r\n")
        assertSame("# EVEMU 1.3\r\n\(header)")
        for event in events {
            assertSame(header + event)
            assertSame(header + event + "\n")
            assertSame(header + event + "\r\n" + "E: 0.2 3 0 1\n")
            assertSame(header + "E: 0.2 3 0 1\n" + event + "\n")
        }
    }

    func testMutatedRecordingsParseTheSame() throws {
        let text = try String(contentsOfFile: TestSupport.fixtureURL("xbox360-pad.evemu").path, encoding: .utf8)
        let bytes = Array(text.utf8)
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return Int(random % UInt64(Int32.max))
        }
        let replacements: [UInt8] = Array("0123456789abcdefx.-+# \t\r\nEIANBP:".utf8) + [0xC3, 0xA9, 0xFF]
        for _ in 0..<500 {
            var mutated = bytes
            for _ in 0..<(1 + next() % 4) {
                let index = next() % mutated.count
                switch next() % 3 {
                case 0: mutated[index] = replacements[next() % replacements.count]
                case 1: mutated.remove(at: index)
                default: mutated.insert(replacements[next() % replacements.count], at: index)
                }
            }
            assertSame(String(decoding: mutated, as: UTF8.self))
        }
    }
}
