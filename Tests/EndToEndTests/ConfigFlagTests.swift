import Foundation
import XCTest

/// `run`'s flags that override config keys are checked by the keys' declarations: the message is the
/// config file's, the flag is named, and it is a usage error (64). `config-reference` prints the
/// reference the repository commits.
final class ConfigFlagTests: XCTestCase {
    /// Runs carbridge to its exit (stdin /dev/null, stdout and stderr to files): its status and output.
    private func carbridge(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-flag-run-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = try carbridgeExecutable()
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = nil
        process.environment = environment
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        // A flag that is wrongly accepted starts a run that never ends on its own: fail, do not hang.
        if exited.wait(timeout: .now() + 30) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
            XCTFail("carbridge \(arguments) did not exit within 30 s")
        }
        return (process.terminationStatus, try String(contentsOf: outURL, encoding: .utf8),
                try String(contentsOf: errURL, encoding: .utf8))
    }

    func testAnOutOfRangeFlagIsAUsageErrorWithTheFilesMessage() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-flags-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("speed.toml").path
        try "[drive]\nmax_speed = 125\n".write(toFile: file, atomically: true, encoding: .utf8)

        let message = "125 is not a multiple of 10 (speeds go in steps of 10)"
        let fromFile = try carbridge(["run", "--config", file, "--no-keyboard", "--link", "stdout"])
        XCTAssertEqual(fromFile.status, 1)
        XCTAssertEqual(fromFile.stderr, "carbridge: \(file):2: drive.max_speed: \(message)\n")

        let fromFlag = try carbridge(["run", "--max-speed", "125", "--no-keyboard", "--link", "stdout"])
        XCTAssertEqual(fromFlag.status, 64)
        XCTAssertTrue(fromFlag.stderr.contains("--max-speed"), fromFlag.stderr)
        XCTAssertTrue(fromFlag.stderr.contains(message), fromFlag.stderr)

        for (flag, value, fragment) in [
            ("--period-ms", "5", "5 is out of range (10…1000)"),
            ("--idle-timeout", "100000", "100000.0 is out of range (0.0…86400.0)"),
            ("--terminator", "cr", "\"cr\" is not one of \"lf\", \"crlf\", \"none\""),
            ("--link", "tcp://nohost", "needs a port"),
        ] {
            let result = try carbridge(["run", flag, value, "--no-keyboard"])
            XCTAssertEqual(result.status, 64, "\(flag) \(value): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(flag) && result.stderr.contains(fragment), "\(flag) \(value): \(result.stderr)")
        }
    }

    func testConfigReferencePrintsTheCommittedReference() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let committed = try String(contentsOf: root.appendingPathComponent("config/carbridge.toml"), encoding: .utf8)
        let toml = try carbridge(["config-reference", "--format", "toml"])
        XCTAssertEqual(toml.status, 0, toml.stderr)
        XCTAssertEqual(toml.stdout, committed)
        let man = try carbridge(["config-reference", "--format", "man"])
        XCTAssertEqual(man.status, 0, man.stderr)
        XCTAssertTrue(man.stdout.hasPrefix(".TH CARBRIDGE.TOML 5 "), man.stdout)
        XCTAssertTrue(man.stdout.contains("\\fBmax_speed\\fR (integer, 10…240; default 240)"), man.stdout)
    }
}
