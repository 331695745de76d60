import DriveConfig
import DriveCore
import DriveInput
import DriveLink
import DriveRuntime
import DriveSystem
import DriveTerminal
import Logging
import XCTest

/// The car's status lines in a run: the bridge (with `[car] low_battery`) feeding the view model and the
/// feedback, the car's lines handed in by a recording link at exact instants.
final class CarStatusRunTests: XCTestCase {
    private var loop: EventLoop!
    private var link: RecordingCarLink!
    private var bridge: Bridge!
    private var model: RunViewModel!
    private var feedback: FeedbackService!
    private var notices: [String] = []

    override func setUpWithError() throws {
        loop = try EventLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "car-status-test") { _ in SwiftLogNoOpLogHandler() }
        bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: logger)
        bridge.lowBattery = LowBatteryAlarm(rule: LowBatteryRule(key: "BAT", threshold: 6.8))
        model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        let config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        feedback = FeedbackService(config: config, loop: loop, events: bridge.events, logger: logger)
        bridge.events.subscribe(feedback)
        bridge.start()
        link.set(.up)
    }

    override func tearDown() {
        feedback.stop()
        feedback = nil
        bridge = nil
        model = nil
        link = nil
        loop = nil
    }

    private func carSays(_ text: String, atSecond second: Int64) {
        link.onLine?(CarLine(time: Instant(nanoseconds: second * 1_000_000_000), text: text))
    }

    func testStatusLinesFillTheTableAndOtherLinesStayCarLines() {
        carSays("OK car ready failsafe=300", atSecond: 1)
        carSays("BAT=7.40;RSSI=-61", atSecond: 2)
        carSays("BAT=7.38", atSecond: 4)
        carSays("BAT 7.4V", atSecond: 5)
        carSays("BAT=7;", atSecond: 6)
        XCTAssertEqual(model.snapshot.carLines.map(\.text), ["OK car ready failsafe=300", "BAT 7.4V", "BAT=7;"],
                       "a status line goes to the table only; a malformed one stays a plain line")
        XCTAssertEqual(model.snapshot.carStatus.summary, "BAT=7.38  RSSI=-61")
        XCTAssertEqual(model.snapshot.carStatus["BAT"]?.time, Instant(nanoseconds: 4_000_000_000))
        XCTAssertEqual(model.snapshot.carStatus["RSSI"]?.number, -61)
        XCTAssertNil(model.snapshot.batteryWarning)
        let screen = RunView.render(model.snapshot, columns: 100, rows: 40)
        XCTAssertTrue(screen.contains("Car status: BAT=7.38  RSSI=-61"), screen)
    }

    func testTheTableInTheSnapshotIsBounded() {
        for n in 0..<200 { carSays("K\(n)=\(n)", atSecond: Int64(n + 1)) }
        XCTAssertEqual(model.snapshot.carStatus.entries.count, 32)
        XCTAssertEqual(model.snapshot.carStatus.entries.first?.key, "K168")
        XCTAssertTrue(model.snapshot.carLines.isEmpty)
    }

    func testALowBatteryRaisesOneNoticeOneCueAndTheWarningUntilItRecovers() {
        let notices = { self.model.snapshot.notices.filter { $0.hasPrefix("car battery") } }
        let cues = { self.model.snapshot.feedback.filter { $0.event == .batteryLow } }
        carSays("BAT=7.10", atSecond: 1)
        XCTAssertEqual(notices(), [])
        carSays("BAT=6.71", atSecond: 3)
        XCTAssertEqual(notices(), ["car battery low: BAT=6.71 (below 6.8)"])
        XCTAssertEqual(cues().count, 1, "the rumble cue")
        XCTAssertEqual(model.snapshot.batteryWarning, "car battery low: BAT=6.71 (below 6.8)")
        let screen = RunView.render(model.snapshot, columns: 100, rows: 40)
        XCTAssertTrue(screen.contains("!! car battery low: BAT=6.71 (below 6.8)"), screen)
        for (second, value) in [(5, "6.69"), (7, "6.85"), (9, "6.99"), (11, "6.60")] {
            carSays("BAT=\(value)", atSecond: Int64(second))
        }
        XCTAssertEqual(notices().count, 1, "hovering near the threshold warns once")
        XCTAssertEqual(cues().count, 1)
        carSays("BAT=7.00", atSecond: 13)
        XCTAssertNil(model.snapshot.batteryWarning, "0.2 above the threshold clears it")
        carSays("BAT=6.79", atSecond: 15)
        XCTAssertEqual(notices(), ["car battery low: BAT=6.71 (below 6.8)", "car battery low: BAT=6.79 (below 6.8)"])
        XCTAssertEqual(cues().count, 2)
        XCTAssertEqual(model.snapshot.state.engineOn, false)
        XCTAssertEqual(link.texts, ["E,0,0,0"], "a warning only: nothing is sent to the car for it")
    }

    func testWithoutTheRuleNothingWarns() {
        bridge.lowBattery = nil
        carSays("BAT=5.00", atSecond: 1)
        XCTAssertNil(model.snapshot.batteryWarning)
        XCTAssertEqual(model.snapshot.carStatus["BAT"]?.value, "5.00")
        XCTAssertTrue(model.snapshot.feedback.isEmpty)
    }
}
