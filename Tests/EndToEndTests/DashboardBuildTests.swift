import CLinux
import Foundation
import Glibc
import XCTest

/// The dashboard lives in its own executable (`CarbridgeCommands/DashboardBuild.swift`): `carbridge`
/// has none of its code, a run with the dashboard on becomes `carbridge-dashboard` in the same process,
/// and a missing or wrong dashboard program is a clear error, not a loop.
final class DashboardBuildTests: XCTestCase {
    /// The two built executables.
    private func executables() throws -> (carbridge: URL, dashboard: URL) {
        let carbridge = try carbridgeExecutable()
        let dashboard = carbridge.deletingLastPathComponent().appendingPathComponent("carbridge-dashboard")
        guard FileManager.default.isExecutableFile(atPath: dashboard.path) else {
            throw MissingExecutable(searchedFrom: dashboard.path)
        }
        return (carbridge, dashboard)
    }

    func testCarbridgeHasNoneOfTheDashboardsCode() throws {
        let (carbridge, dashboard) = try executables()
        // Swift symbols and metadata name their module: every Hummingbird type is `…11Hummingbird…`.
        let marker = Data("HummingbirdCore".utf8)
        XCTAssertNil(try Data(contentsOf: carbridge).range(of: marker), "carbridge links Hummingbird")
        XCTAssertNotNil(try Data(contentsOf: dashboard).range(of: marker), "carbridge-dashboard does not link Hummingbird")
        // libqrencode (the join QR code) is the dashboard's too: its symbol is imported by name.
        let encoder = Data("QRcode_encodeString8bit".utf8)
        XCTAssertNil(try Data(contentsOf: carbridge).range(of: encoder), "carbridge links libqrencode")
        XCTAssertNotNil(try Data(contentsOf: dashboard).range(of: encoder), "carbridge-dashboard does not link libqrencode")
    }

    func testARunWithTheDashboardBecomesTheDashboardBuildInTheSameProcess() throws {
        let (carbridge, dashboard) = try executables()
        let car = try CarListener()
        defer { car.stop() }
        let port = try unusedLoopbackPort()
        let run = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://127.0.0.1:\(car.port)", "--dashboard", "127.0.0.1:\(port)", "--no-keyboard", "--no-view"],
            terminal: nil)
        XCTAssertTrue(waitUntil { car.handshakes == ["E,0,0,0"] }, "no handshake; stderr: \(run.stderr)")
        let pid = run.process.processIdentifier
        // The process Foundation started is now the dashboard build (exec keeps the PID, as systemd needs).
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
                       dashboard.resolvingSymlinksInPath().path)
        let metrics = try httpGet(port: port, path: "/metrics")
        XCTAssertTrue(metrics.hasPrefix("HTTP/1.1 200"), metrics)
        XCTAssertTrue(metrics.contains("carbridge_link_up 1"), metrics)
        XCTAssertTrue(waitUntil { run.stderr.contains("dashboard on http://127.0.0.1:\(port)/") }, run.stderr)
        XCTAssertEqual(run.terminate().status, 0, run.stderr)
        // The web server's event loops are shut down after Hummingbird's own shutdown, not under it (SwiftNIO
        // printed "Cannot schedule tasks on an EventLoop that has already shut down", a crash in its future versions).
        XCTAssertFalse(run.stderr.contains("EventLoop"), run.stderr)
        // Without the dashboard, the run stays `carbridge`.
        let plain = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://127.0.0.1:\(car.port)", "--no-keyboard", "--no-view"], terminal: nil)
        XCTAssertTrue(waitUntil { car.handshakes.count == 2 }, "no second handshake; stderr: \(plain.stderr)")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(plain.process.processIdentifier)/exe"),
                       carbridge.resolvingSymlinksInPath().path)
        XCTAssertEqual(plain.terminate().status, 0, plain.stderr)
    }

    func testAMissingOrWrongDashboardProgramIsAClearError() throws {
        let (carbridge, dashboard) = try executables()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-dashboard-build-\(getpid())")
        let bin = root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let lone = bin.appendingPathComponent("carbridge")
        try FileManager.default.copyItem(at: carbridge, to: lone)
        let arguments = ["run", "--link", "stdout", "--dashboard", "127.0.0.1:0", "--no-keyboard", "--no-view"]

        let missing = try runToExit(lone, arguments)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "carbridge: the dashboard is on ([dashboard] listen or --dashboard) but its program "
            + "carbridge-dashboard is not installed (looked for \(bin.path)/carbridge-dashboard, "
            + "\(root.path)/libexec/carbridge/carbridge-dashboard); turn the dashboard off or reinstall carbridge\n")

        // A copy of carbridge under the dashboard's name: refused, not exec'd again and again.
        try FileManager.default.copyItem(at: carbridge, to: bin.appendingPathComponent("carbridge-dashboard"))
        let wrong = try runToExit(lone, arguments)
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.stderr, "carbridge: \(bin.path)/carbridge-dashboard was started as the dashboard build of "
            + "carbridge but has no dashboard (a copy of carbridge named carbridge-dashboard?): reinstall carbridge\n")

        // The package's layout: PREFIX/bin/carbridge and PREFIX/libexec/carbridge/carbridge-dashboard.
        try FileManager.default.removeItem(at: bin.appendingPathComponent("carbridge-dashboard"))
        let libexec = root.appendingPathComponent("libexec/carbridge")
        try FileManager.default.createDirectory(at: libexec, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: dashboard, to: libexec.appendingPathComponent("carbridge-dashboard"))
        let port = try unusedLoopbackPort()
        let log = root.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let installed = Process()
        installed.executableURL = lone
        installed.arguments = ["run", "--link", "stdout", "--dashboard", "127.0.0.1:\(port)", "--no-keyboard", "--no-view"]
        installed.standardInput = FileHandle.nullDevice
        installed.standardOutput = FileHandle.nullDevice
        installed.standardError = try FileHandle(forWritingTo: log)
        try installed.run()
        defer { if installed.isRunning { kill(installed.processIdentifier, SIGKILL) } }
        let started = waitUntil {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("dashboard on http://127.0.0.1:\(port)/")
        }
        XCTAssertTrue(started, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(installed.processIdentifier)/exe"),
                       libexec.appendingPathComponent("carbridge-dashboard").path)
        kill(installed.processIdentifier, SIGTERM)
        installed.waitUntilExit()
        XCTAssertEqual(installed.terminationStatus, 0)
    }

    /// Runs `executable` to its exit (stdin, stdout /dev/null): status and stderr.
    private func runToExit(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = nil
        environment["CARBRIDGE_DASHBOARD_EXEC"] = nil
        process.environment = environment
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A plain HTTP/1.1 GET on 127.0.0.1:`port`: the whole response.
    private func httpGet(port: UInt16, path: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        // `Connection: close`: the server ends the response by closing.
        let response = FileHandle(fileDescriptor: fd, closeOnDealloc: false).readDataToEndOfFile()
        return String(decoding: response, as: UTF8.self)
    }
}
