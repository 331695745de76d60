import DriveCore
import DriveMapping
import DriveSystem
import Foundation
import XCTest

@testable import DriveInput

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
        let loop = try EventLoop()
        let sensor = try IIOAccelerometer(directory: try tree("shared-scale"), loop: loop)
        let sample = try sensor.readAcceleration()
        XCTAssertEqual(sample.x, 100 * 0.009576806, accuracy: 1e-12)
        XCTAssertEqual(sample.y, -50 * 0.009576806, accuracy: 1e-12)
        XCTAssertEqual(sample.z, 1024 * 0.009576806, accuracy: 1e-12)
        XCTAssertEqual(sensor.name, "mxc4005")
        XCTAssertEqual(sensor.rateHertz, 50)
    }

    func testPerAxisScaleAndOffsetWinOverShared() throws {
        let loop = try EventLoop()
        let sensor = try IIOAccelerometer(directory: try tree("per-axis"), loop: loop)
        XCTAssertEqual(sensor.scales, Vector3(x: 0.5, y: 0.25, z: 2))
        XCTAssertEqual(sensor.offsets, Vector3(x: 1, y: 1, z: -5))
        let sample = try sensor.readAcceleration()
        XCTAssertEqual(sample, Vector3(x: (10 + 1) * 0.5, y: (20 + 1) * 0.25, z: (-30 - 5) * 2))
    }

    func testMountMatrixTextLookupOrder() throws {
        let loop = try EventLoop()
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
        let loop = try EventLoop()
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
        // Frames are on the 10 ms grid: consecutive ones are about 10 ms apart, never bunched.
        for (earlier, later) in zip(frames, frames.dropFirst()) {
            XCTAssertGreaterThanOrEqual(later.time.duration(since: earlier.time), .milliseconds(5))
        }
        sensor.stop()
        XCTAssertFalse(sensor.isRunning)
        XCTAssertEqual(gone, [])
    }

    func testAFileDeletedMidRunEndsWithOneGone() throws {
        let loop = try EventLoop()
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
        let loop = try EventLoop()
        XCTAssertThrowsError(try IIOAccelerometer(directory: "/nonexistent/iio:device9", loop: loop)) { error in
            XCTAssertEqual(error as? InputDeviceError, .notFound(path: "/nonexistent/iio:device9/in_accel_x_raw"))
        }
    }
}
