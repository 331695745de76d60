import Foundation
import Glibc
import XCTest

/// The car's status over real bytes: `carbridge car-sim --battery 6.5` on a loopback TCP port reports
/// `BAT=6.50`, and `carbridge run` with `[car] low_battery = "BAT<6.8"` warns once (docs/protocol.md §7).
final class CarStatusEndToEndTests: XCTestCase {
    func testALowBatteryFromTheSimulatedCarRaisesTheNotice() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "carbridge-status-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("car.toml")
        try "[car]\nlow_battery = \"BAT<6.8\"\n".write(to: config, atomically: true, encoding: .utf8)
        let port = try unusedLoopbackPort()
        let car = try CarbridgeProcess(
            arguments: ["car-sim", "--listen", "127.0.0.1:\(port)", "--battery", "6.5", "--status-interval", "0.1", "--quiet"],
            terminal: nil)
        defer { _ = car.terminate() }
        let run = try CarbridgeProcess(
            arguments: ["run", "--config", config.path, "--link", "tcp://127.0.0.1:\(port)", "--no-keyboard",
                        "--log-level", "debug"],
            terminal: nil)
        let warned = waitUntil(timeout: 15) {
            run.stderr.contains("car battery low: BAT=6.50 (below 6.8)") && run.stderr.components(separatedBy: "car: BAT=6.50").count > 3
        }
        let (status, _) = run.terminate()
        XCTAssertTrue(warned, run.stderr)
        XCTAssertEqual(status, 0, run.stderr)
        let lines = run.stderr.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("car battery low") }.count, 1, "once, though every line is low:\n\(run.stderr)")
        XCTAssertTrue(lines.contains { $0.contains("notice carbridge: car battery low: BAT=6.50 (below 6.8)") }, run.stderr)
        XCTAssertTrue(lines.contains { $0.contains("debug carbridge: car: BAT=6.50") }, "status lines at debug:\n\(run.stderr)")
    }
}
