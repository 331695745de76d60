import DriveCore
import DriveInputModel
import DriveMapping
import DriveSystem
import Foundation
import XCTest

@testable import DriveInput

/// On a manual clock: the sample timer's grid is exact and no wall time passes.
final class IIOAccelerometerTests: XCTestCase {
    private var directories: [String] = []

    override func tearDown() {
        for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
        directories = []
    }

    private func tree(_ name: String) throws -> String {
        let directory = try TestSupport.copyFixtureDirectory("iio/\(name)")
        directories.append(directory)
        return directory
    }

    func testSharedScale() throws {
        let loop = try EventLoop(clock: .manual)
        let sensor = try IIOAccelerometer(directory: try tree("shared-scale"), loop: loop)
        let sample = try sensor.readAcceleration()
        XCTAssertEqual(sample.x, 100 * 0.009576806, accuracy: 1e-12)
        XCTAssertEqual(sample.y, -50 * 0.009576806, accuracy: 1e-12)
        XCTAssertEqual(sample.z, 1024 * 0.009576806, accuracy: 1e-12)
        XCTAssertEqual(sensor.name, "mxc4005")
        XCTAssertEqual(sensor.rateHertz, 50)
    }

    func testPerAxisScaleAndOffsetWinOverShared() throws {
        let loop = try EventLoop(clock: .manual)
        let sensor = try IIOAccelerometer(directory: try tree("per-axis"), loop: loop)
        XCTAssertEqual(sensor.scales, Vector3(x: 0.5, y: 0.25, z: 2))
        XCTAssertEqual(sensor.offsets, Vector3(x: 1, y: 1, z: -5))
        let sample = try sensor.readAcceleration()
        XCTAssertEqual(sample, Vector3(x: (10 + 1) * 0.5, y: (20 + 1) * 0.25, z: (-30 - 5) * 2))
    }

    func testMountMatrixTextLookupOrder() throws {
        let loop = try EventLoop(clock: .manual)
        let shared = try tree("shared-scale")
        XCTAssertEqual(try IIOAccelerometer(directory: shared, loop: loop).mountMatrixText, "0, 1, 0; -1, 0, 0; 0, 0, 1", "in_accel_mount_matrix before mount_matrix")
        XCTAssertEqual(
            try IIOAccelerometer(directory: shared, loop: loop, udevMountMatrix: "1, 0, 0; 0, -1, 0; 0, 0, -1").mountMatrixText,
            "1, 0, 0; 0, -1, 0; 0, 0, -1", "udev ACCEL_MOUNT_MATRIX first")
        XCTAssertEqual(try IIOAccelerometer(directory: try tree("per-axis"), loop: loop).mountMatrixText, "-1, 0, 0; 0, 1, 0; 0, 0, -1")
        XCTAssertNil(try IIOAccelerometer(directory: try tree("no-matrix"), loop: loop).mountMatrixText)
        XCTAssertEqual(IIOAccelerometer.findMountMatrixText(directory: shared, udevMountMatrix: "  "), "0, 1, 0; -1, 0, 0; 0, 0, 1")
    }

    func testSamplesOnTheLoopWithTransformAndSeesNewValues() throws {
        let loop = try EventLoop(clock: .manual)
        let directory = try tree("no-matrix")
        let sensor = try IIOAccelerometer(directory: directory, loop: loop, rateHertz: 100) { v in
            Vector3(x: -v.x, y: v.y, z: -v.z)
        }
        var frames: [InputFrame] = []
        var gone: [String] = []
        sensor.onFrame = { frames.append($0) }
        sensor.onGone = { gone.append($0) }
        sensor.start()
        try TestSupport.run(loop) { frames.count >= 2 }
        XCTAssertEqual(frames.first?.acceleration?.z ?? 0, -9.81, accuracy: 1e-9)
        XCTAssertTrue(frames.first?.axes.isEmpty ?? false)
        // In-place rewrite (what a sysfs attribute looks like) and atomic replacement (a re-open).
        try "-200\n".write(toFile: directory + "/in_accel_x_raw", atomically: false, encoding: .utf8)
        try "490\n".write(toFile: directory + "/in_accel_z_raw", atomically: true, encoding: .utf8)
        let seen = frames.count
        try TestSupport.run(loop) { frames.count >= seen + 1 }
        XCTAssertEqual(frames.last?.acceleration?.x ?? 0, 2.0, accuracy: 1e-9)
        XCTAssertEqual(frames.last?.acceleration?.z ?? 0, -4.9, accuracy: 1e-9)
        // Frames are on the 10 ms grid (a manual clock: exactly 10 ms apart), never bunched.
        for (earlier, later) in zip(frames, frames.dropFirst()) {
            XCTAssertGreaterThanOrEqual(later.time.duration(since: earlier.time), .milliseconds(5))
            XCTAssertEqual(later.time.duration(since: earlier.time), .milliseconds(10))
        }
        sensor.stop()
        XCTAssertFalse(sensor.isRunning)
        XCTAssertEqual(gone, [])
    }

    func testAFileDeletedMidRunEndsWithOneGone() throws {
        let loop = try EventLoop(clock: .manual)
        let directory = try tree("shared-scale")
        let sensor = try IIOAccelerometer(directory: directory, loop: loop, rateHertz: 200)
        var frames = 0
        var gone: [String] = []
        sensor.onFrame = { _ in frames += 1 }
        sensor.onGone = { gone.append($0) }
        sensor.start()
        try TestSupport.run(loop) { frames >= 2 }
        try FileManager.default.removeItem(atPath: directory + "/in_accel_y_raw")
        try TestSupport.run(loop) { !gone.isEmpty }
        let framesAtGone = frames
        try TestSupport.run(loop, seconds: 0.05) { false }
        XCTAssertEqual(gone.count, 1)
        XCTAssertTrue(gone.first?.contains("in_accel_y_raw") ?? false, gone.first ?? "")
        XCTAssertEqual(frames, framesAtGone, "no samples after gone")
        XCTAssertFalse(sensor.isRunning)
    }

    func testMissingDirectoryIsAClearError() throws {
        let loop = try EventLoop(clock: .manual)
        XCTAssertThrowsError(try IIOAccelerometer(directory: "/nonexistent/iio:device9", loop: loop)) { error in
            XCTAssertEqual(error as? InputDeviceError, .notFound(path: "/nonexistent/iio:device9/in_accel_x_raw"))
        }
    }

    /// Regression: `nan`, `inf` and out-of-range scale/offset values were accepted (Double(_:) parses them)
    /// and made every sample NaN or infinite. Now they fail the open, naming the file and the text.
    func testNonFiniteScaleOrOffsetIsAClearError() throws {
        let loop = try EventLoop(clock: .manual)
        for (file, text) in [("in_accel_scale", "nan"), ("in_accel_scale", "inf\n"), ("in_accel_y_scale", "-inf"),
                             ("in_accel_offset", "1e400"), ("in_accel_z_offset", "0x1p3"), ("in_accel_scale", "")] {
            let directory = try tree("no-matrix")
            try text.write(toFile: "\(directory)/\(file)", atomically: false, encoding: .utf8)
            XCTAssertThrowsError(try IIOAccelerometer(directory: directory, loop: loop), "\(file)=\(text)") { error in
                guard let error = error as? IIOValueError else { return XCTFail("\(file)=\(text): \(error)") }
                XCTAssertEqual(error.path, "\(directory)/\(file)")
                XCTAssertTrue("\(error)".contains("is not a finite decimal number"), "\(error)")
            }
        }
    }

    /// Regression: a raw value of `nan`/`inf` (or one so large the sample overflows) became a NaN/infinite
    /// sample. Now it is a read error: `readAcceleration` throws and the running reader ends with one `onGone`.
    func testNonFiniteRawValueIsAReadErrorNeverASample() throws {
        let loop = try EventLoop(clock: .manual)
        for (file, text, extra) in [("in_accel_x_raw", "nan", ""), ("in_accel_y_raw", "-inf", ""),
                                    ("in_accel_z_raw", "Infinity", ""), ("in_accel_x_raw", "1e308", "10")] {
            let directory = try tree("no-matrix")
            if !extra.isEmpty { try extra.write(toFile: directory + "/in_accel_scale", atomically: false, encoding: .utf8) }
            let sensor = try IIOAccelerometer(directory: directory, loop: loop, rateHertz: 200)
            try text.write(toFile: "\(directory)/\(file)", atomically: false, encoding: .utf8)
            XCTAssertThrowsError(try sensor.readAcceleration(), "\(file)=\(text)") { error in
                XCTAssertTrue(error is IIOValueError, "\(error)")
            }
            var frames: [InputFrame] = []
            var gone: [String] = []
            sensor.onFrame = { frames.append($0) }
            sensor.onGone = { gone.append($0) }
            sensor.start()
            try TestSupport.run(loop) { !gone.isEmpty }
            XCTAssertEqual(frames.count, 0, "\(file)=\(text): no sample at all")
            XCTAssertEqual(gone.count, 1)
            XCTAssertTrue(gone[0].contains(extra.isEmpty ? file : "overflows"), gone[0])
            XCTAssertFalse(sensor.isRunning)
        }
    }

    /// A mount matrix with huge (finite) entries must not turn a good sample into an infinite one either.
    func testTransformOverflowIsAReadError() throws {
        let loop = try EventLoop(clock: .manual)
        let sensor = try IIOAccelerometer(directory: try tree("no-matrix"), loop: loop) { v in
            MountMatrix(Vector3(x: 1e308, y: 1e308, z: 1e308), Vector3(x: 0, y: 1, z: 0), Vector3(x: 0, y: 0, z: 1)).apply(v)
        }
        var frames = 0
        var gone: [String] = []
        sensor.onFrame = { _ in frames += 1 }
        sensor.onGone = { gone.append($0) }
        sensor.start()
        try TestSupport.run(loop) { !gone.isEmpty }
        XCTAssertEqual(frames, 0)
        XCTAssertTrue(gone.first?.contains("mount matrix") ?? false, gone.first ?? "")
    }

    func testValueParser() throws {
        for (text, value) in [("12", 12.0), (" -0.5\n", -0.5), ("+3", 3), ("1e3", 1000), ("0.009576806", 0.009576806),
                              (".5", 0.5), ("5.", 5), ("-1E-2", -0.01)] {
            XCTAssertEqual(try IIOValue.parse(text), value, text)
        }
        for text in ["", " ", "nan", "NaN", "inf", "-inf", "infinity", "1e400", "-1e999", "0x10", "0x1p3", "1,5", "1e",
                     "e5", ".", "-", "1 2", "12abc", String(repeating: "1", count: 65)] {
            XCTAssertThrowsError(try IIOValue.parse(text), text)
        }
    }
}
