import Foundation
import DriveMapping
import XCTest

@testable import DriveInput

final class EvemuRecordingTests: XCTestCase {
    func testParsesAnXboxPadRecording() throws {
        let path = try TestSupport.fixtureURL("xbox360-pad.evemu").path
        let recording = try EvemuRecording(contentsOfFile: path)
        XCTAssertEqual(recording.formatVersion, "1.3")
        XCTAssertEqual(recording.info.name, "Microsoft X-Box 360 pad")
        XCTAssertEqual(recording.info.bustype, 3)
        XCTAssertEqual(recording.info.vendorProduct, "045e:028e")
        XCTAssertEqual(recording.info.version, 0x114)
        XCTAssertEqual(recording.info.properties, [])
        XCTAssertEqual(recording.info.keys, [0x130, 0x131, 0x133, 0x134, 0x136, 0x137, 0x13a, 0x13b, 0x13c, 0x13d, 0x13e])
        XCTAssertTrue(recording.info.hasGamepadButtons)
        XCTAssertEqual(recording.supportedCodes[EvdevCode.evAbs], [0, 1, 2, 3, 4, 5, 16, 17])
        XCTAssertEqual(recording.supportedCodes[0x15], [80, 81, 88, 89, 90, 96])
        XCTAssertEqual(recording.info.axes[0], AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128))
        XCTAssertEqual(recording.info.axes[5], AbsInfo(minimum: 0, maximum: 255))
        XCTAssertEqual(recording.info.axes[16], AbsInfo(minimum: -1, maximum: 1))
        XCTAssertEqual(recording.events.count, 17)
        XCTAssertEqual(recording.events.first, InputEvent(seconds: 0, microseconds: 1, type: 3, code: 0, value: -2345))
        XCTAssertEqual(recording.events[9], InputEvent(seconds: 0, microseconds: 100_000, type: 3, code: 16, value: -1), "%04d of -1 is -001")
        XCTAssertEqual(recording.events[6], InputEvent(seconds: 0, microseconds: 48_000, type: 1, code: 0x130, value: 1))
        XCTAssertEqual(recording.durationMicroseconds, 199_999)
        XCTAssertEqual(recording.eventLines.count, 17)
    }

    func testParsesAnAccelerometerRecording() throws {
        let recording = try EvemuRecording.parse(try TestSupport.fixtureText("dualsense-motion.evemu"))
        XCTAssertTrue(recording.info.isAccelerometer)
        XCTAssertEqual(recording.info.axes[0]?.resolution, 8192)
        XCTAssertEqual(recording.info.bustype, 5)
    }

    func testMalformedFixturesReportLineAndExpectation() throws {
        let cases: [(String, Int, String)] = [
            ("malformed-header.evemu", 3, "expected \"N: <device name>\""),
            ("malformed-event.evemu", 7, "expected \"E: <sec>.<usec> <type (hex)> <code (hex)> <value>\""),
            ("malformed-truncated.evemu", 4, "expected \"I: <bustype> <vendor> <product> <version>\" but the file ends"),
        ]
        for (file, line, expectation) in cases {
            let path = try TestSupport.fixtureURL(file).path
            XCTAssertThrowsError(try EvemuRecording(contentsOfFile: path), file) { error in
                guard let error = error as? EvemuError else { return XCTFail("\(file): \(error)") }
                XCTAssertEqual(error.line, line, "\(file): \(error)")
                XCTAssertTrue(error.message.contains(expectation), "\(file): \(error.message)")
                XCTAssertEqual(error.file, path)
                XCTAssertTrue(error.description.hasPrefix("\(path):\(line): "), error.description)
            }
        }
    }

    func testMalformedLinesTable() {
        let header = "N: pad\nI: 0003 045e 028e 0114\n"
        let cases: [(String, Int, String)] = [
            ("", 1, "expected \"N: <device name>\" but the file ends"),
            ("# only a comment\n", 2, "expected \"N: <device name>\" but the file ends"),
            ("N:\n", 1, "expected a device name"),
            ("N: pad\nI: 3 45e 28e\n", 2, "four hex numbers"),
            ("N: pad\nI: 0003 045e 028e zzzz\n", 2, "four hex numbers"),
            ("N: pad\nB: 01 00\n", 2, "expected \"I: <bustype>"),
            (header + "P: 00 00\n", 3, "8 hex bytes"),
            (header + "B: 01 00 00 00 00 00 00 00 0g\n", 3, "expected \"B: <type> <8 hex bytes>\""),
            (header + "B: 40 00 00 00 00 00 00 00 00\n", 3, "expected \"B: <type> <8 hex bytes>\""),
            (header + "A: 00 -32768 32767 16\n", 3, "expected \"A: <code (hex)> <min> <max> <fuzz> <flat> [<resolution>]\""),
            (header + "A: 00 -32768 x 16 128 0\n", 3, "expected \"A:"),
            (header + "A: 99 0 1 0 0 0\n", 3, "expected \"A:"),
            (header + "E: 0.000001 0003 0000\n", 3, "expected \"E:"),
            (header + "E: 0.0000001 0003 0000 5\n", 3, "expected \"E:"),
            (header + "E: 1 0003 0000 5\n", 3, "expected \"E:"),
            (header + "E: 0.000001 0003 0000 5\nA: 00 0 1 0 0 0\n", 4, "after the events began"),
            (header + "X: what\n", 3, "expected a line starting with"),
            (header + "E: 0.000001 0003 0000 5\nE: 0.000002 0003 00", 4, "expected \"E:"),
        ]
        for (text, line, expectation) in cases {
            XCTAssertThrowsError(try EvemuRecording.parse(text), text) { error in
                guard let error = error as? EvemuError else { return XCTFail("\(text): \(error)") }
                XCTAssertEqual(error.line, line, "\(text.debugDescription): \(error)")
                XCTAssertTrue(error.message.contains(expectation), "\(text.debugDescription): \(error.message)")
            }
        }
    }

    func testAcceptsCRLFCommentsAndOldFormatAbsLines() throws {
        let text = "# EVEMU 1.1\r\nN: Old # pad\r\nI: 0003 045e 028e 0114   # ids\r\n\r\nA: 00 -10 10 0 2\r\nL: 00 1\r\nS: 00 0\r\n# c\r\nE: 1.000000 0003 0000 -0010 # x\r\n"
        let recording = try EvemuRecording.parse(text)
        XCTAssertEqual(recording.info.name, "Old # pad", "the name keeps its # (evemu reads the whole line)")
        XCTAssertEqual(recording.info.axes[0], AbsInfo(minimum: -10, maximum: 10, fuzz: 0, flat: 2))
        XCTAssertEqual(recording.events, [InputEvent(seconds: 1, microseconds: 0, type: 3, code: 0, value: -10)])
        XCTAssertEqual(recording.eventLines, [9])
    }

    func testMissingFileIsNotFound() {
        XCTAssertThrowsError(try EvemuRecording(contentsOfFile: "/nonexistent/recording.evemu")) { error in
            XCTAssertEqual(error as? InputDeviceError, .notFound(path: "/nonexistent/recording.evemu"))
        }
    }

    /// Regression: `E: 9223372036855.000000 …` used to parse (the timestamp wrapped around in
    /// `timeMicroseconds`) and then trapped on the checked subtraction in `durationMicroseconds` and the player.
    func testTimestampTooLargeForMicrosecondsIsAParseErrorWithFileAndLine() throws {
        let header = "N: pad\nI: 0003 045e 028e 0114\n"
        for text in [
            header + "E: 9223372036855.000000 0003 0000 100\n",
            header + "E: 1.000000 0003 0000 5\nE: 9223372036855.000000 0003 0000 100\n",
            header + "E: 1.000000 0003 0000 5\nE: 99999999999999999999.000000 0003 0000 100\n",
        ] {
            XCTAssertThrowsError(try EvemuRecording.parse(text), text) { error in
                guard let error = error as? EvemuError else { return XCTFail("\(text): \(error)") }
                XCTAssertEqual(error.line, text.split(separator: "\n").count, "\(error)")
                XCTAssertTrue(error.message.contains("too large") || error.message.contains("expected \"E:"), error.message)
            }
        }
        let path = NSTemporaryDirectory() + "carbridge-huge-\(getpid()).evemu"
        try (header + "E: 1.000000 0003 0000 5\nE: 9223372036855.000000 0003 0000 100\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertThrowsError(try EvemuRecording(contentsOfFile: path)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path):4: the timestamp 9223372036855.000000 is too large"), "\(error)")
        }
        // The largest accepted timestamp still works end to end.
        let largest = try EvemuRecording.parse(
            header + "E: 0.000000 0003 0000 5\nE: \(EvemuRecording.maximumSeconds).999999 0003 0000 6\n")
        XCTAssertEqual(largest.durationMicroseconds, EvemuRecording.maximumSeconds * 1_000_000 + 999_999)
    }
}
