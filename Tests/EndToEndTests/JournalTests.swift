import Foundation
import Glibc
import XCTest

/// Log lines when stderr is the journal (`JOURNAL_STREAM` names the stderr pipe, as systemd sets it):
/// each starts with its syslog priority and has no time; otherwise lines are as on a terminal.
final class JournalPriorityTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-journal-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A motion sensor that goes silent for 1 s: with a 200 ms input timeout that is a warning.
        let recording = """
            # EVEMU 1.3
            N: Test Motion Sensors
            I: 0003 054c 0ce6 8100
            P: 40 00 00 00 00 00 00 00
            B: 00 0b 00 00 00 00 00 00 00
            B: 03 07 00 00 00 00 00 00 00
            A: 00 -32768 32767 16 0 8192
            A: 01 -32768 32767 16 0 8192
            A: 02 -32768 32767 16 0 8192
            E: 0.000001 0003 0000 0000
            E: 0.000001 0003 0001 0000
            E: 0.000001 0003 0002 8192
            E: 0.000001 0000 0000 0000
            E: 1.000001 0003 0000 0010
            E: 1.000001 0000 0000 0000

            """
        try recording.write(to: directory.appendingPathComponent("silent.evemu"), atomically: true, encoding: .utf8)
        try "[steering]\nsource = \"tilt\"\ninput_timeout_ms = 200\n"
            .write(to: directory.appendingPathComponent("tilt.toml"), atomically: true, encoding: .utf8)
        try "[drive]\nmax_speed = 125\n".write(to: directory.appendingPathComponent("bad.toml"), atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs the silent-sensor replay (info, notice and warning lines) and returns stderr's lines.
    private func replayLines(journal: Bool, environment: [String: String] = [:]) throws -> [String] {
        let process = try CarbridgeProcess(
            arguments: ["run", "--config", path("tilt.toml"), "--replay", path("silent.evemu"), "--link", "stdout",
                        "--no-keyboard", "--log-level", "debug"],
            terminal: nil, environment: environment, journalStderr: journal)
        XCTAssertEqual(process.waitForExit(timeout: 10), 0, process.stderr)  // and its stderr's end
        return process.stderr.split(separator: "\n").map(String.init)
    }

    func testJournalLinesCarryTheirPriorityAndNoTime() throws {
        let lines = try replayLines(journal: true)
        XCTAssertTrue(lines.contains("<6>info carbridge: connecting to stdout"), "\(lines)")
        XCTAssertTrue(lines.contains("<5>notice carbridge: link up: stdout"), "\(lines)")
        XCTAssertTrue(lines.contains("<4>warning carbridge: accelerometer silent for 200 ms: input lost"), "\(lines)")
        // Every line has a priority and none a time of day (the journal stamps lines itself).
        for line in lines {
            XCTAssertNotNil(line.range(of: #"^<[0-7]>"#, options: .regularExpression), "no priority: \(line)")
            XCTAssertNil(line.range(of: #"\d\d:\d\d:\d\d\.\d\d\d"#, options: .regularExpression), "a time: \(line)")
        }
    }

    func testAConfigErrorIsAnErrorInTheJournal() throws {
        let process = try CarbridgeProcess(
            arguments: ["run", "--config", path("bad.toml"), "--no-keyboard"], terminal: nil, journalStderr: true)
        XCTAssertEqual(process.waitForExit(timeout: 10), 1)
        XCTAssertEqual(process.stderr.split(separator: "\n").map(String.init),
                       ["<3>carbridge: \(path("bad.toml")):2: drive.max_speed: 125 is not a multiple of 10 (speeds go in steps of 10)"])
    }

    func testNotTheJournalNoPriorities() throws {
        // A JOURNAL_STREAM inherited from somewhere else (another stream's device:inode) is not stderr.
        for environment in [[:], ["JOURNAL_STREAM": "1:1"]] {
            let lines = try replayLines(journal: false, environment: environment)
            XCTAssertTrue(lines.contains { $0.hasSuffix(" warning carbridge: accelerometer silent for 200 ms: input lost") }, "\(lines)")
            for line in lines {
                XCTAssertNotNil(line.range(of: #"^\d\d:\d\d:\d\d\.\d\d\d (debug|info|notice|warning|error) carbridge: "#,
                                           options: .regularExpression), "not a plain line: \(line)")
            }
        }
        let process = try CarbridgeProcess(
            arguments: ["run", "--config", path("bad.toml"), "--no-keyboard"], terminal: nil,
            environment: ["JOURNAL_STREAM": "1:1"])
        XCTAssertEqual(process.waitForExit(timeout: 10), 1)
        XCTAssertTrue(process.stderr.hasPrefix("carbridge: \(path("bad.toml")):2:"), process.stderr)
    }
}
