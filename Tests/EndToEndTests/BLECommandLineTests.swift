import Foundation
import XCTest

/// What the command line says about BLE cars without any Bluetooth: `check-config`'s profile line and notice,
/// and `scan --le` refusing the raw inquiry (classic devices only).
final class BLECommandLineTests: XCTestCase {
    /// Runs carbridge to its exit with a scrubbed environment: status, stdout, stderr.
    private func carbridge(_ arguments: [String], systemBus: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = try carbridgeExecutable()
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = nil
        if let systemBus { environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus }
        process.environment = environment
        try process.run()
        // Small outputs: reading to the end before waiting cannot fill a pipe.
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout, stderr)
    }

    private func configFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-ble-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testCheckConfigShowsTheCustomProfile() throws {
        let file = try configFile("[link]\nurl = \"ble://HMSoft\"\nble_service = \"FFE0\"\nble_write = \"FFE1\"\n")
        let result = try carbridge(["check-config", file])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("  link: ble://HMSoft (terminator lf)\n  BLE profile: custom (service ffe0, write ffe1, notify ffe1)\n"),
                      result.stdout)
    }

    func testCheckConfigSaysTheKeysAreUnusedOnAnotherLink() throws {
        let file = try configFile("[link]\nurl = \"rfcomm://HC-05\"\nble_service = \"FFE0\"\nble_write = \"FFE1\"\n")
        let result = try carbridge(["check-config", file])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("  note: ble_service, ble_write are not used: url rfcomm://HC-05 is not a ble:// link\n"),
                      result.stdout)
        XCTAssertFalse(result.stdout.contains("BLE profile"), result.stdout)
    }

    func testCheckConfigReportsTheHalfProfile() throws {
        let file = try configFile("[link]\nurl = \"ble://HMSoft\"\nble_write = \"FFE1\"\n")
        let result = try carbridge(["check-config", file])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.hasPrefix("carbridge: \(file):3: link.ble_write: ble_service and ble_write go together"), result.stderr)
    }

    func testAnLEScanNeedsBluetoothd() throws {
        let raw = try carbridge(["scan", "--raw", "--le"])
        XCTAssertEqual(raw.status, 64)
        XCTAssertTrue(raw.stderr.contains("the raw HCI inquiry finds classic (BR/EDR) devices only"), raw.stderr)
        // No bus at all: no fallback to the raw inquiry, one sentence instead.
        let noBus = try carbridge(["scan", "--le", "--seconds", "2"], systemBus: "unix:path=/nonexistent/carbridge-test-bus")
        XCTAssertEqual(noBus.status, 1)
        XCTAssertTrue(noBus.stderr.contains("an LE scan needs bluetoothd (the raw HCI inquiry finds classic devices only)"), noBus.stderr)
        XCTAssertFalse(noBus.stderr.contains("raw HCI inquiry instead"), noBus.stderr)
        XCTAssertEqual(noBus.stdout, "")
    }
}
