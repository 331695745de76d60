import DriveRuntime
import DriveSystem
import DriveTestSupport
import Foundation
import Glibc
import Logging
import XCTest

/// Log lines to the journal's stream: `<N>` priorities and no time; anywhere else: as before.
final class JournalLogTests: XCTestCase {
    /// Logs one line of each level through a `LogSink` on a pipe, with `JOURNAL_STREAM` = `journalStream`
    /// (nil: the pipe's own device:inode); returns the lines the pipe got.
    private func logEveryLevel(journalStream: String?) throws -> [String] {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let sink = LogSink(fd: fds[1], journalStream: journalStream ?? JournalStream.value(for: fds[1]))
        var logger = Logger(label: "carbridge") { ConsoleLogHandler(label: $0, sink: sink, level: .trace) }
        logger.logLevel = .trace
        logger.trace("t")
        logger.debug("d")
        logger.info("i")
        logger.notice("n")
        logger.warning("w")
        logger.error("e")
        logger.critical("c")
        XCTAssertTrue(sink.drain(within: .seconds(2)))
        close(fds[1])
        return readText(until: fds[0]).split(separator: "\n").map(String.init)
    }

    func testTheJournalGetsPrioritiesAndNoTime() throws {
        let lines = try logEveryLevel(journalStream: nil)
        XCTAssertEqual(lines, [
            "<7>trace carbridge: t", "<7>debug carbridge: d", "<6>info carbridge: i", "<5>notice carbridge: n",
            "<4>warning carbridge: w", "<3>error carbridge: e", "<2>critical carbridge: c",
        ])
    }

    func testAnotherStreamGetsTimesAndNoPrefix() throws {
        for stream in ["1:1", "garbage", ""] {
            let lines = try logEveryLevel(journalStream: stream)
            XCTAssertEqual(lines.count, 7)
            for line in lines {
                XCTAssertFalse(line.hasPrefix("<"), line)
                XCTAssertNotNil(line.range(of: #"^\d\d:\d\d:\d\d\.\d\d\d (trace|debug|info|notice|warning|error|critical) carbridge: \w$"#,
                                           options: .regularExpression), line)
            }
        }
    }

    func testJournalStreamParsing() {
        let parsed = JournalStream.parse("8:12345")
        XCTAssertEqual(parsed?.device, 8)
        XCTAssertEqual(parsed?.inode, 12345)
        XCTAssertNil(JournalStream.parse("8:"))
        XCTAssertNil(JournalStream.parse("8:1:2"))
        XCTAssertNil(JournalStream.parse("x:1"))
        XCTAssertFalse(JournalStream.isJournal(fd: 2, journalStream: nil))
        XCTAssertFalse(JournalStream.isJournal(fd: -1, journalStream: "1:1"))
    }
}
