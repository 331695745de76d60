import DriveCore
import DriveInputModel
import DriveMapping
import DriveSystem
import Glibc
import XCTest

@testable import DriveInput

/// The parts that need real devices cannot run here (no /dev/input, no udev daemon): they must fail cleanly.
final class SystemDeviceTests: XCTestCase {
    func testOpeningANonexistentNodeIsNotFound() throws {
        let loop = try EventLoop()
        XCTAssertThrowsError(try EvdevDevice(path: "/dev/input/event999", loop: loop)) { error in
            XCTAssertEqual(error as? InputDeviceError, .notFound(path: "/dev/input/event999"))
            XCTAssertTrue("\(error)".contains("carbridge devices"))
        }
    }

    func testOpeningSomethingThatIsNotEvdevIsAClearError() throws {
        let loop = try EventLoop()
        XCTAssertThrowsError(try EvdevDevice(path: "/dev/null", loop: loop)) { error in
            guard case .notAnEvdevDevice(let path, _)? = error as? InputDeviceError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(path, "/dev/null")
        }
    }

    func testOpenWithRetryReportsOtherErrorsAtOnce() throws {
        let loop = try EventLoop()
        var results: [Result<EvdevDevice, Error>] = []
        let retry = EvdevDevice.open(path: "/dev/input/event999", loop: loop) { results.append($0) }
        XCTAssertEqual(retry.attemptCount, 1)
        XCTAssertEqual(results.count, 1)
        guard case .failure(let error)? = results.first else { return XCTFail("expected a failure") }
        XCTAssertEqual(error as? InputDeviceError, .notFound(path: "/dev/input/event999"))
    }

    func testPermissionDeniedIsRetriedOnLoopTimersUntilItWorks() throws {
        let loop = try EventLoop()
        var failuresLeft = 3
        var result: Result<Int, Error>?
        let start = loop.now()
        let retry = PermissionRetry<Int>(
            loop: loop, window: .seconds(2), interval: .milliseconds(20),
            attempt: {
                if failuresLeft > 0 {
                    failuresLeft -= 1
                    throw InputDeviceError.permissionDenied(path: "/dev/input/event5", owner: "root:input mode 660")
                }
                return 42
            },
            completion: { result = $0 })
        XCTAssertNil(result, "the first failure schedules a retry instead of failing")
        try TestSupport.run(loop) { result != nil }
        XCTAssertEqual(try result?.get(), 42)
        XCTAssertEqual(retry.attemptCount, 4)
        XCTAssertGreaterThanOrEqual(loop.now().duration(since: start), .milliseconds(60))
    }

    func testPermissionDeniedGivesUpAfterTheWindowNamingTheUdevRule() throws {
        let loop = try EventLoop()
        var result: Result<Int, Error>?
        let retry = PermissionRetry<Int>(
            loop: loop, window: .milliseconds(100), interval: .milliseconds(25),
            attempt: { throw InputDeviceError.permissionDenied(path: "/dev/input/event5", owner: "root:input mode 660") },
            completion: { result = $0 })
        try TestSupport.run(loop) { result != nil }
        XCTAssertEqual(retry.attemptCount, 5)
        guard case .failure(let error)? = result else { return XCTFail("expected a failure") }
        let text = "\(error)"
        XCTAssertTrue(text.contains("udev/70-carbridge.rules"), text)
        XCTAssertTrue(text.contains("sudo udevadm control --reload && sudo udevadm trigger"), text)
        XCTAssertTrue(text.contains("carbridge` group") || text.contains("carbridge group") || text.contains("`carbridge`"), text)
        XCTAssertTrue(text.contains("root:input"), text)
    }

    func testCancelledRetryNeverCompletes() throws {
        let loop = try EventLoop()
        var completions = 0
        let retry = PermissionRetry<Int>(
            loop: loop, window: .seconds(1), interval: .milliseconds(10),
            attempt: { throw InputDeviceError.permissionDenied(path: "x", owner: "y") },
            completion: { _ in completions += 1 })
        retry.cancel()
        try TestSupport.run(loop, seconds: 0.05) { false }
        XCTAssertEqual(completions, 0)
        XCTAssertEqual(retry.attemptCount, 1)
    }

    func testUdevEnumerationOnThisMachineDoesNotCrash() throws {
        let devices = UdevWatcher.enumerate()
        for device in devices {
            XCTAssertTrue(["input", "iio"].contains(device.subsystem), device.syspath)
            if device.subsystem == "input" { XCTAssertTrue(device.syspath.split(separator: "/").last?.hasPrefix("event") ?? false) }
        }
        let loop = try EventLoop()
        let watcher = try UdevWatcher(loop: loop)
        var appeared: [InputDeviceDescriptor] = []
        watcher.onAppeared = { appeared.append($0) }
        do {
            let started = try watcher.start()
            XCTAssertEqual(started, appeared)
            XCTAssertTrue(watcher.isMonitoring)
            try TestSupport.run(loop, seconds: 0.05) { false }
        } catch {
            XCTAssertFalse("\(error)".isEmpty)  // no netlink in this sandbox: a clear error, not a crash
        }
        watcher.stop()
        XCTAssertFalse(watcher.isMonitoring)
        XCTAssertEqual(DeviceCatalog.list().count, devices.count)
    }

    func testCatalogFormatting() {
        XCTAssertTrue(DeviceCatalog.format([]).hasPrefix("No input devices found"))
        let pad = InputDeviceDescriptor(
            deviceClass: .gamepad, name: "Microsoft X-Box 360 pad", vendor: 0x045e, product: 0x028e,
            syspath: "/sys/devices/x/input/input20/event7", devnode: "/dev/input/event7", idPath: "pci-0000:00:14.0-usb-0:2:1.0")
        let iio = InputDeviceDescriptor(
            deviceClass: .iioAccelerometer, name: "mxc4005", subsystem: "iio", syspath: "/sys/devices/y/iio:device0",
            devnode: "/dev/iio:device0", sysfsDirectory: "/sys/devices/y/iio:device0", udevMountMatrix: "0, 1, 0; -1, 0, 0; 0, 0, 1")
        let text = DeviceCatalog.format(
            [DeviceListing(descriptor: pad, readable: true), DeviceListing(descriptor: iio, readable: false)],
            pickedBy: { $0.deviceClass == .gamepad ? ["[devices] gamepad = auto"] : [] })
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "gamepad           045e:028e  /dev/input/event7    readable      \"Microsoft X-Box 360 pad\"")
        XCTAssertTrue(lines.contains("    ID_PATH pci-0000:00:14.0-usb-0:2:1.0"))
        XCTAssertTrue(lines.contains("    picked by [devices] gamepad = auto"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("iioAccelerometer  -          /dev/iio:device0     NOT readable  \"mxc4005\"") }, text)
        XCTAssertTrue(lines.contains("    sysfs   /sys/devices/y/iio:device0"))
        XCTAssertTrue(text.contains("udev/70-carbridge.rules"))
        XCTAssertFalse(text.contains("uniq"), "no uniq line for devices without one")
        let bluetooth = InputDeviceDescriptor(
            deviceClass: .gamepad, name: "Wireless Controller", vendor: 0x054c, product: 0x09cc, bustype: 5,
            syspath: "/sys/devices/virtual/misc/uhid/0005:054C:09CC.0001/input/input41/event11", uniq: "a4:53:85:00:00:01")
        XCTAssertTrue(DeviceCatalog.format([DeviceListing(descriptor: bluetooth, readable: true)])
            .contains("\n    uniq    a4:53:85:00:00:01  (Bluetooth address)\n"))
    }

    func testEventCodeNamesFromLibevdev() {
        let names = EventCodeNames()
        XCTAssertEqual(names.code(named: "BTN_SOUTH"), EventCode(type: 1, code: 0x130))
        XCTAssertEqual(names.code(named: "BTN_A"), EventCode(type: 1, code: 0x130), "aliases resolve")
        XCTAssertEqual(names.code(named: "KEY_SPACE"), EventCode(type: 1, code: 57))
        XCTAssertEqual(names.code(named: "ABS_HAT0X"), EventCode(type: 3, code: 16))
        XCTAssertNil(names.code(named: "BTN_NOPE"))
        XCTAssertNil(names.code(named: ""))
        XCTAssertEqual(names.name(of: EventCode(type: 1, code: 0x130)), "BTN_SOUTH")
        XCTAssertEqual(names.name(of: EventCode(type: 3, code: 0)), "ABS_X")
        XCTAssertEqual(names.typeName(3), "EV_ABS")
        XCTAssertTrue(names.knownNames.contains("BTN_TR"))
        XCTAssertTrue(names.knownNames.contains("ABS_RZ"))
        XCTAssertTrue(names.knownNames.contains("KEY_SPACE"))
        XCTAssertFalse(names.knownNames.contains("REL_X"))
    }
}
