import DriveCore
import Foundation
import XCTest

@testable import DriveInput

/// A pad whose kernel driver refuses it makes no input node: the `hid` subsystem's events are how carbridge hears of it.
final class UnboundHidDevicesTests: XCTestCase {
    private let refusedDS4 = "/sys/devices/virtual/misc/uhid/0005:054C:05C4.0004"

    private func event(_ action: String, _ syspath: String, driver: String? = nil) -> HidDeviceEvent {
        var properties = ["HID_NAME": "Wireless Controller", "HID_ID": "0005:0000054C:000005C4", "HID_UNIQ": "a0:ab:51:00:00:09"]
        if let driver { properties["DRIVER"] = driver }
        return HidDeviceEvent(action: action, syspath: syspath, properties: properties)!
    }

    func testParsesUdevsPropertiesAndNamesTheDeviceAsAWarningDoes() {
        let added = event("add", refusedDS4)
        XCTAssertEqual(added.action, .add)
        XCTAssertEqual(added.bus, 5)
        XCTAssertEqual(added.vendor, 0x054c)
        XCTAssertEqual(added.product, 0x05c4)
        XCTAssertEqual(added.sysname, "0005:054C:05C4.0004")
        XCTAssertEqual(added.summary, "\"Wireless Controller\" (054c:05c4, Bluetooth, a0:ab:51:00:00:09)")
        XCTAssertNil(HidDeviceEvent(action: "change", syspath: refusedDS4, properties: [:]), "only add, bind, unbind and remove")
        let bare = HidDeviceEvent(action: "add", syspath: refusedDS4, properties: ["HID_ID": "garbage", "HID_UNIQ": ""])!
        XCTAssertNil(bare.vendor)
        XCTAssertNil(bare.uniq)
        XCTAssertEqual(bare.summary, "\"0005:054C:05C4.0004\"", "no name: the kernel's")
    }

    func testADeviceNoDriverTookIsReportedOnceWhenItsGraceEnds() {
        var watch = UnboundHidDevices(grace: .seconds(6))
        let t0 = Instant(nanoseconds: 1_000_000_000)
        watch.handle(event("add", refusedDS4), at: t0)
        watch.handle(event("add", "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0005"), at: t0 + .seconds(1))
        XCTAssertEqual(watch.nextDeadline, t0 + .seconds(6))
        XCTAssertEqual(watch.expired(at: t0 + .seconds(5)), [], "within its grace a probe may still be asking the device")
        // the DualSense's driver takes it; the DS4 stays unbound
        watch.handle(event("bind", "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0005", driver: "playstation"), at: t0 + .seconds(2))
        XCTAssertEqual(watch.expired(at: t0 + .seconds(6)).map(\.syspath), [refusedDS4])
        XCTAssertEqual(watch.expired(at: t0 + .seconds(60)), [], "reported once")
        XCTAssertNil(watch.nextDeadline)
    }

    func testAnAddWithItsDriverOrARemovalEndsTheWait() {
        var watch = UnboundHidDevices(grace: .seconds(6))
        let t0 = Instant(nanoseconds: 0)
        watch.handle(event("add", refusedDS4, driver: "sony"), at: t0)
        XCTAssertNil(watch.nextDeadline, "already bound when udev saw it")
        watch.handle(event("add", refusedDS4), at: t0)
        watch.handle(event("remove", refusedDS4), at: t0 + .seconds(1))
        XCTAssertEqual(watch.expired(at: t0 + .seconds(10)), [], "unplugged before its grace ended: nothing to say")
    }

    func testStillUnboundReadsTheDriverLinkInSysfs() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-hid-\(UUID().uuidString)").path
        let unbound = root + "/0005:054C:05C4.0004", bound = root + "/0005:054C:0CE6.0005"
        try FileManager.default.createDirectory(atPath: unbound, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bound, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bound + "/driver", withDestinationPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        XCTAssertTrue(UnboundHidDevices.isStillUnbound(event("add", unbound)))
        XCTAssertFalse(UnboundHidDevices.isStillUnbound(event("add", bound)), "a driver took it after all")
        XCTAssertFalse(UnboundHidDevices.isStillUnbound(event("add", root + "/gone")), "a device that went away is not reported")
    }
}
