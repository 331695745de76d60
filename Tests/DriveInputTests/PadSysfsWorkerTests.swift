import DriveCore
import DriveInputModel
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

@testable import DriveInput

/// The worker writes a pad's light on its own thread (the newest colour), puts the original values back when
/// closed, reads the battery, and reports a write it may not make once, then leaves the light alone.
final class PadSysfsWorkerTests: XCTestCase {
    private let green = LightColour(red: 0, green: 255, blue: 0)
    private let red = LightColour(red: 255, green: 0, blue: 0)

    private func start(
        _ node: String, in sysfs: PadSysfsFixture, loop: EventLoop, interval: Duration = .seconds(30),
        reports: @escaping (PadSysfsWorker.Report) -> Void
    ) throws -> PadSysfsWorker {
        let options = PadSysfsWorker.Options(sysfsRoot: sysfs.root, batteryInterval: interval, permissionWindow: .zero)
        return try XCTUnwrap(PadSysfsWorker.start(eventNode: node, options: options, loop: loop, report: reports))
    }

    /// Turns the loop in short slices until `condition` holds (at most 5 s): the worker's writes wake no loop.
    private func wait(_ loop: EventLoop, until condition: () -> Bool) throws {
        try spin(loop, timeout: .seconds(5), until: condition)
    }

    func testADualSensesLightbarShowsTheColourAndGetsItsOwnBackWhenClosed() throws {
        let sysfs = try PadSysfsFixture()
        let bar = try sysfs.addDualSense() + "/leds/input7:rgb:indicator"
        let loop = try EventLoop()
        var readings: [PadBatteryReading] = []
        var found: PadSysfs?
        let worker = try start("/dev/input/event4", in: sysfs, loop: loop) { report in
            switch report {
            case .found(let pad): found = pad
            case .battery(let reading): readings.append(reading)
            case .lightsFailed(let path, _): XCTFail("no failure expected: \(path)")
            }
        }
        worker.show(red)
        worker.show(green)
        try wait(loop) { sysfs.read(bar + "/multi_intensity") == "0 255 0" && sysfs.read(bar + "/brightness") == "255" }
        XCTAssertEqual(sysfs.read(bar + "/multi_intensity"), "0 255 0")
        XCTAssertEqual(sysfs.read(bar + "/brightness"), "255")
        try wait(loop) { !readings.isEmpty }
        XCTAssertEqual(readings, [PadBatteryReading(level: 80, charging: false)], "read at once when the pad opens")
        XCTAssertNotNil(found?.lights)
        for player in 1...5 {
            XCTAssertEqual(sysfs.read("\(sysfs.root)/devices/virtual/misc/uhid/0005:054C:0CE6.0002/leds/input7:white:player-\(player)/brightness"), "0")
        }
        worker.close()
        XCTAssertTrue(worker.finish(waitingUntil: loop.now().advanced(by: .seconds(5))))
        XCTAssertEqual(sysfs.read(bar + "/multi_intensity"), "0 0 255", "the driver's blue back")
        XCTAssertEqual(sysfs.read(bar + "/brightness"), "255")
    }

    func testADualShock4sLEDsAreScaledAndItsMasterSwitchTurnedOnAndBackOff() throws {
        let sysfs = try PadSysfsFixture()
        let leds = try sysfs.addDualShock4(maximum: 100, global: 0) + "/leds/0003:054C:05C4.0003:"
        let loop = try EventLoop()
        let worker = try start("/dev/input/event6", in: sysfs, loop: loop) { _ in }
        worker.show(LightColour(red: 255, green: 0x60, blue: 0))
        try wait(loop) { sysfs.read(leds + "global/brightness") == "1" }
        XCTAssertEqual(sysfs.read(leds + "red/brightness"), "100")
        XCTAssertEqual(sysfs.read(leds + "green/brightness"), "38")
        XCTAssertEqual(sysfs.read(leds + "blue/brightness"), "0")
        worker.close()
        XCTAssertTrue(worker.finish(waitingUntil: loop.now().advanced(by: .seconds(5))))
        XCTAssertEqual(["red", "green", "blue", "global"].map { sysfs.read(leds + "\($0)/brightness") }, ["0", "0", "64", "0"])
    }

    func testABatteryReadingIsReportedWhenItChanges() throws {
        let sysfs = try PadSysfsFixture()
        let hid = try sysfs.addDualSense(capacity: 30)
        let battery = hid + "/power_supply/ps-controller-battery-e4:17:d8:3a:9c:01"
        let loop = try EventLoop()
        var readings: [PadBatteryReading] = []
        let worker = try start("/dev/input/event4", in: sysfs, loop: loop, interval: .milliseconds(20)) { report in
            if case .battery(let reading) = report { readings.append(reading) }
        }
        try wait(loop) { readings.count == 1 }
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertEqual(readings.count, 1, "the same reading again is not reported")
        try sysfs.write(battery + "/capacity", "18\n")
        try wait(loop) { readings.count == 2 }
        try sysfs.write(battery + "/status", "Charging\n")
        try wait(loop) { readings.count == 3 }
        XCTAssertEqual(readings, [
            PadBatteryReading(level: 30, charging: false), PadBatteryReading(level: 18, charging: false),
            PadBatteryReading(level: 18, charging: true),
        ])
        worker.close()
        XCTAssertTrue(worker.finish(waitingUntil: loop.now().advanced(by: .seconds(5))))
    }

    func testAWriteItMayNotMakeIsReportedOnceAndTheLightLeftAlone() throws {
        let sysfs = try PadSysfsFixture()
        let bar = try sysfs.addDualSense() + "/leds/input7:rgb:indicator"
        // The intensities may be written (the first write), the brightness not: what was written is put back.
        try sysfs.makeUnwritable(bar + "/brightness")
        let loop = try EventLoop()
        var failures: [String] = []
        let worker = try start("/dev/input/event4", in: sysfs, loop: loop) { report in
            if case .lightsFailed(let path, let error) = report {
                XCTAssertNotEqual(error, 0)
                failures.append(path)
            }
        }
        worker.show(green)
        try wait(loop) { !failures.isEmpty }
        XCTAssertEqual(failures, [try XCTUnwrap(PadSysfs.resolved(bar)) + "/brightness"], "named, once")
        worker.show(red)
        worker.show(green)
        try DriveTestSupport.run(loop, for: .milliseconds(200))
        XCTAssertEqual(failures.count, 1, "then left alone: nothing written, nothing reported")
        XCTAssertEqual(sysfs.read(bar + "/multi_intensity"), "0 255 0", "the first colour's intensities only")
        worker.close()
        XCTAssertTrue(worker.finish(waitingUntil: loop.now().advanced(by: .seconds(5))))
        XCTAssertEqual(sysfs.read(bar + "/multi_intensity"), "0 0 255", "what it wrote is put back")
    }

    func testAPadWithNothingEndsAtOnce() throws {
        let sysfs = try PadSysfsFixture()
        try sysfs.addPad(hid: "virtual/misc/uhid/0005:045E:02E0.0005", input: "input20", event: "event9")
        let loop = try EventLoop()
        var found: [Bool] = []
        let worker = try start("/dev/input/event9", in: sysfs, loop: loop) { report in
            if case .found(let pad) = report { found.append(pad != nil && pad?.lights == nil && pad?.battery == nil) }
        }
        XCTAssertTrue(worker.finish(waitingUntil: loop.now().advanced(by: .seconds(5))), "no light, no battery: nothing to wait for")
        try wait(loop) { !found.isEmpty }
        XCTAssertEqual(found, [true], "found: an input device with neither")
        worker.show(green)
        worker.close()
    }
}
