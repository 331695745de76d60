import DriveCore
import DriveInputModel
import DriveMapping
import DriveSystem
import Foundation
import XCTest

@testable import DriveInput

/// An IIO `AccelerometerSource` on a manual clock: the device's own mount matrix is applied.
final class AccelerometerSourceTests: XCTestCase {
    private var directories: [String] = []

    override func tearDown() {
        for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
        directories = []
    }

    private func descriptor(_ name: String, udevMountMatrix: String? = nil) throws -> InputDeviceDescriptor {
        let directory = try TestSupport.copyFixtureDirectory("iio/\(name)")
        directories.append(directory)
        return InputDeviceDescriptor(
            deviceClass: .iioAccelerometer, name: name, subsystem: "iio", syspath: directory,
            sysfsDirectory: directory, udevMountMatrix: udevMountMatrix)
    }

    func testIIOSamplesHaveTheMountMatrixApplied() throws {
        let loop = try EventLoop(clock: .manual)
        let descriptor = try descriptor("shared-scale")
        let raw = try IIOAccelerometer(directory: descriptor.sysfsDirectory!, loop: loop).readAcceleration()
        let source = try AccelerometerSource(descriptor: descriptor, loop: loop)
        XCTAssertEqual(source.mountMatrix, try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 1"))
        XCTAssertNil(source.mountMatrixError)
        XCTAssertTrue(source.isAccelerometer)
        XCTAssertNil(source.currentAcceleration())
        XCTAssertEqual(source.description, "IIO accelerometer \"mxc4005\" (\(descriptor.sysfsDirectory!))")
        var frames: [InputFrame] = []
        source.onFrame = { frames.append($0) }
        try source.start()
        try loop.advance(by: .milliseconds(10))
        source.stop()
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(frames.first?.acceleration, source.mountMatrix?.apply(raw))
    }

    func testBadMountMatrixIsLeftOutOrThrownWhenStrict() throws {
        let loop = try EventLoop(clock: .manual)
        let descriptor = try descriptor("no-matrix", udevMountMatrix: "1, 2; garbage")
        let source = try AccelerometerSource(descriptor: descriptor, loop: loop)
        XCTAssertNil(source.mountMatrix)
        XCTAssertNotNil(source.mountMatrixError)
        XCTAssertThrowsError(try AccelerometerSource(descriptor: descriptor, loop: loop, strictMountMatrix: true)) {
            XCTAssertTrue($0 is MountMatrix.ParseError)
        }
    }

    func testEvdevDescriptorWithoutNodeIsNotFound() throws {
        let loop = try EventLoop(clock: .manual)
        let descriptor = InputDeviceDescriptor(deviceClass: .accelerometer, name: "x", syspath: "/sys/devices/x")
        XCTAssertThrowsError(try AccelerometerSource(descriptor: descriptor, loop: loop))
    }
}
