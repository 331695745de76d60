import DriveConfig
import DriveCore
import DriveInput
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Foundation
import XCTest

/// `carbridge calibrate`'s logic on an IIO sysfs tree in a temporary directory (the same files
/// Tests/DriveInputTests/Fixtures/iio has) and a manual-clock loop: a 1 s window takes no wall time.
final class CalibrationSessionTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-calibrate-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// An IIO accelerometer without a mount matrix; raw × 0.01 = m/s².
    private func iioTree(x: Int, y: Int = 0, z: Int) throws -> String {
        let tree = directory.appendingPathComponent("iio:device0")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        for (name, value) in [("name", "lis3lv02d"), ("in_accel_scale", "0.01"), ("in_accel_x_raw", "\(x)"),
                              ("in_accel_y_raw", "\(y)"), ("in_accel_z_raw", "\(z)")] {
            try (value + "\n").write(to: tree.appendingPathComponent(name), atomically: false, encoding: .utf8)
        }
        return tree.path
    }

    private func setRaw(_ tree: String, x: Int) {
        try? "\(x)\n".write(toFile: tree + "/in_accel_x_raw", atomically: false, encoding: .utf8)
    }

    private func defaults() throws -> CarbridgeConfig { try CarbridgeConfig.defaults(resolver: EventCodeNames()) }

    func testAveragesGravityOverTheWindowIntoTheNeutral() throws {
        let tree = try iioTree(x: 981, z: 981)  // tilted 45° about the forward axis (tilt_axes xz)
        let loop = try makeManualLoop()
        var lines: [String] = []
        let session = CalibrationSession(config: try defaults(), device: tree, seconds: 1, loop: loop) { lines.append($0) }
        // Half-way through, the reading moves 2° (x 9.81 → ~10.49): the neutral is their average, no warning.
        _ = loop.schedule(after: .milliseconds(500)) { self.setRaw(tree, x: 1050) }
        let start = loop.now()
        let measurement = try session.measure()
        XCTAssertEqual(loop.now().duration(since: start), .seconds(1), "samples for exactly the window")
        XCTAssertGreaterThanOrEqual(measurement.sampleCount, 50)
        XCTAssertLessThanOrEqual(measurement.sampleCount, 51)
        XCTAssertEqual(measurement.average.z, 9.81, accuracy: 1e-9)
        XCTAssertGreaterThan(measurement.average.x, 9.81)
        XCTAssertLessThan(measurement.average.x, 10.50)
        let expected = atan2(measurement.average.x, measurement.average.z) * 180 / .pi
        XCTAssertEqual(measurement.neutral, expected, accuracy: 1e-9)
        XCTAssertEqual(measurement.neutral, 46, accuracy: 1.1)
        XCTAssertFalse(measurement.moved)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("calibrate: reading IIO accelerometer \"lis3lv02d\" (\(tree)) for 1.0 s") ?? false, "\(lines)")
        XCTAssertTrue(lines.last?.hasPrefix("calibrate: \(measurement.sampleCount) samples, gravity ") ?? false, "\(lines)")
        XCTAssertTrue(lines.last?.hasSuffix("roll \(measurement.rounded)°") ?? false, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("warning") })
    }

    func testNoSamplesIsAnError() throws {
        let tree = try iioTree(x: 0, z: 981)
        let loop = try makeManualLoop()
        var lines: [String] = []
        let session = CalibrationSession(config: try defaults(), device: tree, seconds: 0, loop: loop) { lines.append($0) }
        XCTAssertThrowsError(try session.run(configFile: nil)) { error in
            let message = (error as? CarbridgeError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("gave no samples in 0.0 s"), message)
            XCTAssertTrue(message.contains("carbridge monitor --tilt"), message)
        }
        XCTAssertFalse(lines.contains { $0.contains("neutral_deg") }, "nothing saved or printed: \(lines)")
    }

    func testAZeroGravityVectorIsAnError() throws {
        let tree = try iioTree(x: 0, y: 981, z: 0)  // gravity along y: nothing over tilt_axes xz
        let loop = try makeManualLoop()
        let session = CalibrationSession(config: try defaults(), device: tree, seconds: 0.5, loop: loop) { _ in }
        XCTAssertThrowsError(try session.measure()) { error in
            XCTAssertTrue("\(error)".contains("over tilt_axes \"x,z\" is zero"), "\(error)")
        }
    }

    func testAVaryingRollWarns() throws {
        let tree = try iioTree(x: 0, z: 981)
        let loop = try makeManualLoop()
        var lines: [String] = []
        let session = CalibrationSession(config: try defaults(), device: tree, seconds: 1, loop: loop) { lines.append($0) }
        _ = loop.schedule(after: .milliseconds(300)) { self.setRaw(tree, x: 200) }  // ~11.5° of roll
        let measurement = try session.measure()
        XCTAssertTrue(measurement.moved)
        XCTAssertEqual(measurement.rollSpread, atan2(2.0, 9.81) * 180 / .pi, accuracy: 1e-9)
        XCTAssertTrue(lines.contains(
            "calibrate: warning: the roll varied by 12° while sampling; hold the device still and run it again"), "\(lines)")
    }

    func testSavesIntoTheConfigFileKeepingItsOtherLines() throws {
        let tree = try iioTree(x: -170, z: 966)  // ≈ -10°
        let file = directory.appendingPathComponent("my.toml").path
        try """
            # my laptop
            [steering]
            source = "tilt"   # tilt it
            neutral_deg = 0.0
            sensitivity = 1.5
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let config = try CarbridgeConfig.load(file: file, resolver: EventCodeNames())
        let loop = try makeManualLoop()
        var lines: [String] = []
        let session = CalibrationSession(config: config, device: tree, seconds: 1, loop: loop) { lines.append($0) }
        try session.run(configFile: file)
        let neutral = ConfigFileEditor.roundedNeutral(atan2(-1.70, 9.66) * 180 / .pi)
        XCTAssertEqual(lines.last, "neutral_deg = \(neutral) saved in \(file) [steering]")
        let saved = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(saved.contains("# my laptop\n[steering]\nsource = \"tilt\"   # tilt it\n"), saved)
        XCTAssertTrue(saved.contains("sensitivity = 1.5"), saved)
        let reloaded = try CarbridgeConfig.load(file: file, resolver: EventCodeNames())
        XCTAssertEqual(reloaded.steering.neutralDegrees, neutral)
    }

    func testATiltThrottleGetsItsPitchNeutralWithTheRolls() throws {
        let tree = try iioTree(x: -170, y: 259, z: 966)  // roll ≈ -10°, pitch (y,z) ≈ 15°
        let file = directory.appendingPathComponent("rig.toml").path
        try """
            [steering]
            source = "tilt"
            [throttle]
            source = "tilt"   # lean forward to go
            pitch_axes = "y,z"
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let config = try CarbridgeConfig.load(file: file, resolver: EventCodeNames())
        let loop = try makeManualLoop()
        var lines: [String] = []
        let session = CalibrationSession(config: config, device: tree, seconds: 1, loop: loop) { lines.append($0) }
        try session.run(configFile: file)
        let roll = ConfigFileEditor.roundedNeutral(atan2(-1.70, 9.66) * 180 / .pi)
        let pitch = ConfigFileEditor.roundedNeutral(atan2(2.59, 9.66) * 180 / .pi)
        XCTAssertEqual(Array(lines.suffix(2)), [
            "neutral_deg = \(roll) saved in \(file) [steering]", "neutral_deg = \(pitch) saved in \(file) [throttle]",
        ])
        let reloaded = try CarbridgeConfig.load(file: file, resolver: EventCodeNames())
        XCTAssertEqual(reloaded.steering.neutralDegrees, roll)
        XCTAssertEqual(reloaded.throttle.neutralDegrees, pitch)
        XCTAssertEqual(pitch, 15, accuracy: 0.1)
        let saved = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(saved.contains("source = \"tilt\"   # lean forward to go"), saved)
    }

    func testWithoutAFileItPrintsHowToSetIt() throws {
        let tree = try iioTree(x: 0, z: 981)
        let loop = try makeManualLoop()
        var lines: [String] = []
        try CalibrationSession(config: try defaults(), device: tree, seconds: 0.2, loop: loop) { lines.append($0) }
            .run(configFile: nil)
        XCTAssertEqual(lines.suffix(2).first, "neutral_deg = 0.0")
        XCTAssertTrue(lines.last?.hasPrefix("not saved (no --config FILE)") ?? false, "\(lines)")
    }

    func testAFileThatCannotBeWrittenIsAnError() throws {
        let tree = try iioTree(x: 0, z: 981)
        let loop = try makeManualLoop()
        let session = CalibrationSession(config: try defaults(), device: tree, seconds: 0.2, loop: loop) { _ in }
        let missing = directory.appendingPathComponent("no/such/dir.toml").path
        XCTAssertThrowsError(try session.run(configFile: missing)) { error in
            XCTAssertTrue("\(error)".hasPrefix("neutral_deg = 0.0, but it could not be saved in \(missing)"), "\(error)")
        }
    }
}
