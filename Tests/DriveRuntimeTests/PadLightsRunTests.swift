import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveRuntime
import DriveSystem
import DriveTerminal
import DriveTestSupport
import Foundation
import Logging
import XCTest

/// The pads' light and battery in a run: the bridge, the view model and the feedback, a pad opened on a sysfs
/// fixture tree (a DualSense's, laid out as hid-playstation makes it); its worker's writes and readings are on
/// a thread of its own, so the test waits for them on the real loop.
final class PadLightsRunTests: XCTestCase {
    private var loop: EventLoop!
    private var link: RecordingCarLink!
    private var bridge: Bridge!
    private var model: RunViewModel!
    private var feedback: FeedbackService!
    private var sysfs: PadSysfsFixture!
    private var bar = ""
    private var battery = ""
    private let log = LightsLogLines()
    private var batteryEvents: [PadBatteryChange] = []
    private let pad = "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0002/input/input7/event4"

    override func setUpWithError() throws {
        try setUp(configText: "")
    }

    private func setUp(configText: String) throws {
        feedback?.stop()
        loop = try EventLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "pad-lights-test") { [log] _ in LightsLogHandler(lines: log) }
        let config = try CarbridgeConfig.parse(text: configText, file: "lights.toml", resolver: EventCodeNames())
        bridge = Bridge(settings: config.drive, link: link, loop: loop, logger: logger)
        model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        sysfs = try PadSysfsFixture()
        let hid = try sysfs.addDualSense(capacity: 50)
        bar = hid + "/leds/input7:rgb:indicator"
        battery = hid + "/power_supply/ps-controller-battery-e4:17:d8:3a:9c:01"
        let options = PadSysfsWorker.Options(sysfsRoot: sysfs.root, batteryInterval: .milliseconds(10), permissionWindow: .zero)
        feedback = FeedbackService(config: config, loop: loop, events: bridge.events, logger: logger, pads: options)
        bridge.events.subscribe(feedback)
        bridge.events.subscribe(BatteryRecorder { [unowned self] in self.batteryEvents.append($0) })
        bridge.start()
    }

    override func tearDown() {
        feedback?.stop()
        feedback = nil
        bridge = nil
        model = nil
        link = nil
        loop = nil
        sysfs = nil
    }

    private func padChanged(opened: Bool) {
        bridge.events.publish(.device(InputDeviceChange(
            key: pad, description: "gamepad \"DualSense Wireless Controller\"", gamepadNode: "/dev/input/event4", opened: opened)))
    }

    private var intensities: String? { sysfs.read(bar + "/multi_intensity") }

    /// The frames the car got, a streamed repeat counted once.
    private var frames: [String] {
        link.texts.reduce(into: []) { texts, text in if texts.last != text { texts.append(text) } }
    }

    /// Waits (at most 5 s) until the lightbar shows `text` ("R G B").
    private func expectLight(_ text: String, _ message: String, line: UInt = #line) throws {
        try spin(loop) { intensities == text && sysfs.read(bar + "/brightness") == "255" }
        XCTAssertEqual(intensities, text, message, line: line)
    }

    func testTheLightFollowsTheRunAndIsPutBackWhenThePadCloses() throws {
        padChanged(opened: true)
        try expectLight("255 0 0", "link down: red")
        link.set(.up)
        try expectLight("48 48 48", "engine off: dim white")
        bridge.apply(.engine)
        try expectLight("0 96 96", "engine on, stopped: dim cyan")
        bridge.apply(.speedUp)
        try expectLight("0 255 0", "driving: green")
        bridge.apply(.inputLost)
        try expectLight("255 0 255", "input lost: the car refuses motion, magenta")
        bridge.apply(.speedUp)
        XCTAssertEqual(model.snapshot.state.speed, 0, "refused indeed")
        bridge.apply(.inputRestored)
        try expectLight("0 96 96", "input back, the car stopped by the loss: dim cyan")
        padChanged(opened: false)
        try spin(loop) { intensities == "0 0 255" }
        XCTAssertEqual(intensities, "0 0 255", "the pad's own colour back")
        XCTAssertEqual(frames, ["E,0,0,0", "M,0,10,1", "M,0,0,1"], "the car's frames are the drive's alone")
    }

    func testStopPutsTheLightBack() throws {
        link.set(.up)
        padChanged(opened: true)
        try expectLight("48 48 48", "engine off")
        feedback.stop()
        XCTAssertEqual(intensities, "0 0 255", "stop waits for the original values to be written back")
        XCTAssertEqual(sysfs.read(bar + "/brightness"), "255")
    }

    func testColoursComeFromTheConfigAndLightsOffLeavesThePadAlone() throws {
        try setUp(configText: "[feedback]\nlight_engine_off = \"#0000FF\"\n")
        link.set(.up)
        padChanged(opened: true)
        try expectLight("0 0 255", "light_engine_off")
        bridge.apply(.engine)
        try expectLight("0 96 96", "the default light_stopped")

        try setUp(configText: "[feedback]\nlights = false\n")
        link.set(.up)
        padChanged(opened: true)
        try sysfs.write(bar + "/multi_intensity", "1 2 3\n")
        bridge.apply(.engine)
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertEqual(intensities, "1 2 3", "lights = false: never written")
    }

    func testALowPadBatteryWarnsOnceReachesTheViewsAndTurnsTheLightAmber() throws {
        link.set(.up)
        padChanged(opened: true)
        try expectLight("48 48 48", "engine off")
        try sysfs.write(battery + "/capacity", "20\n")
        try spin(loop) { !batteryEvents.isEmpty }
        let warning = "pad battery low: gamepad \"DualSense Wireless Controller\" at 20 %"
        XCTAssertEqual(batteryEvents.map(\.description), [warning])
        XCTAssertEqual(model.snapshot.padBatteryWarnings, [warning])
        XCTAssertTrue(RunView.render(model.snapshot, columns: 100, rows: 40).contains("!! \(warning)"))
        XCTAssertEqual(log.lines.filter { $0.contains("pad battery") }, ["warning: \(warning)"])
        try expectLight("255 96 0", "battery low: amber")
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertEqual(intensities, "255 96 0", "the warning beats driving")
        try sysfs.write(battery + "/capacity", "17\n")
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertEqual(batteryEvents.count, 1, "not repeated")
        try sysfs.write(battery + "/status", "Charging\n")
        try spin(loop) { batteryEvents.count == 2 }
        XCTAssertEqual(batteryEvents.last?.description, "pad battery charging: gamepad \"DualSense Wireless Controller\" at 17 %")
        XCTAssertEqual(model.snapshot.padBatteryWarnings, [])
        try expectLight("0 255 0", "charging: driving again")
        try sysfs.write(battery + "/status", "Discharging\n")
        try sysfs.write(battery + "/capacity", "26\n")
        // Read every 10 ms: plenty of time to see 26 % (no event: the alarm is only re-armed).
        try DriveTestSupport.run(loop, for: .milliseconds(300))
        try sysfs.write(battery + "/capacity", "19\n")
        try spin(loop) { batteryEvents.count == 3 }
        XCTAssertEqual(batteryEvents.last?.isLow, true, "again after it rose above 25 %")
        XCTAssertEqual(frames, ["E,0,0,0", "M,0,10,1"], "a warning only: nothing is sent to the car for it")
        // A pad that goes takes its warning with it.
        padChanged(opened: false)
        XCTAssertEqual(model.snapshot.padBatteryWarnings, [])
    }

    func testAReconnectedPadWarnsAgain() throws {
        link.set(.up)
        try sysfs.write(battery + "/capacity", "10\n")
        padChanged(opened: true)
        try spin(loop) { batteryEvents.count == 1 }
        padChanged(opened: false)
        padChanged(opened: true)
        try spin(loop) { batteryEvents.count == 2 }
        XCTAssertEqual(batteryEvents.map(\.isLow), [true, true])
        XCTAssertEqual(model.snapshot.padBatteryWarnings.count, 1)
    }

    func testALightItMayNotWriteIsLoggedOnceAndTheCarDrivesOn() throws {
        try sysfs.makeUnwritable(bar + "/brightness")
        padChanged(opened: true)
        try spin(loop) { log.lines.contains { $0.contains("lights: cannot write") } }
        link.set(.up)
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        bridge.apply(.speedUp)
        bridge.apply(.inputLost)
        bridge.apply(.inputRestored)
        try DriveTestSupport.run(loop, for: .milliseconds(200))
        let failures = log.lines.filter { $0.contains("lights: cannot write") }
        XCTAssertEqual(failures.count, 1, "\(log.lines)")
        XCTAssertTrue(failures[0].hasPrefix("warning: lights: cannot write "), failures[0])
        XCTAssertTrue(failures[0].contains("/leds/input7:rgb:indicator/brightness"), failures[0])
        XCTAssertTrue(failures[0].contains("udev/70-carbridge.rules"), failures[0])
        XCTAssertEqual(frames, ["E,0,0,0", "M,0,10,1", "M,0,20,1", "M,0,0,1"], "the car's events are unaffected")
        XCTAssertEqual(model.snapshot.state.engineOn, true)
    }
}

/// Hears the pads' battery events.
private final class BatteryRecorder: RunSubscriber {
    let heard: (PadBatteryChange) -> Void
    init(_ heard: @escaping (PadBatteryChange) -> Void) { self.heard = heard }
    func receive(_ event: RunEvent) {
        if case .padBattery(let change) = event { heard(change) }
    }
}

private final class LightsLogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var lines: [String] { lock.withLock { stored } }
    func append(_ line: String) { lock.withLock { stored.append(line) } }
}

private struct LightsLogHandler: LogHandler {
    let lines: LightsLogLines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { lines.append("\(event.level): \(event.message)") }
}
