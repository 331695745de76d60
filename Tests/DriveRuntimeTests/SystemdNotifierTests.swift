import DriveCore
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// `SystemdNotifier` on a manual-clock loop with a recording `send`: READY=1 only once the loop runs,
/// WATCHDOG=1 from the loop's timer every half timeout, STATUS= only on change and rate-limited,
/// STOPPING=1 once.
final class SystemdNotifierTests: XCTestCase {
    private var loop: EventLoop!
    private var sent: [(time: Instant, text: String)] = []

    private func makeNotifier(watchdog: Duration? = .milliseconds(400)) throws -> SystemdNotifier {
        loop = try makeManualLoop()
        sent = []
        return SystemdNotifier(loop: loop, watchdogTimeout: watchdog, statusInterval: .milliseconds(500)) { [unowned self] in
            self.sent.append((self.loop.now(), $0))
        }
    }

    private func run(milliseconds: Int64) throws {
        try DriveTestSupport.run(loop, for: .milliseconds(milliseconds))
    }

    func testReadyOnlyOnceTheLoopRunsThenPingsEveryHalfTimeout() throws {
        let notifier = try makeNotifier()
        XCTAssertEqual(notifier.watchdogInterval, .milliseconds(200))
        notifier.setStatus("engine off, speed 0 forward, link connecting")
        notifier.start()
        XCTAssertTrue(sent.isEmpty, "READY=1 before the loop ran")
        let start = loop.now()
        try run(milliseconds: 1000)
        XCTAssertEqual(sent.first?.text, "READY=1\nSTATUS=engine off, speed 0 forward, link connecting\nWATCHDOG=1")
        let pings = sent.dropFirst().filter { $0.text == "WATCHDOG=1" }.map { $0.time.duration(since: start) }
        XCTAssertEqual(pings, [200, 400, 600, 800, 1000].map { Duration.milliseconds($0) })
    }

    func testNoWatchdogNoPings() throws {
        let notifier = try makeNotifier(watchdog: nil)
        notifier.start()
        try run(milliseconds: 5000)
        XCTAssertEqual(sent.map(\.text), ["READY=1"])
        XCTAssertNil(loop.nextTimerDeadline, "a timer without a watchdog")
    }

    func testAStalledLoopSendsNoPings() throws {
        // The pings are the loop's own timer: while the loop does not run (here: time passes without
        // the loop turning, as in a handler that never returns), nothing is sent.
        let notifier = try makeNotifier()
        notifier.start()
        try run(milliseconds: 0)
        XCTAssertEqual(sent.count, 1)
        usleep(500_000)  // the wait is the test: wall time passes; the loop does not turn
        XCTAssertEqual(sent.count, 1)
    }

    func testStatusOnlyOnChangeAndAtMostEveryInterval() throws {
        let notifier = try makeNotifier(watchdog: nil)
        notifier.start()
        try run(milliseconds: 0)
        let start = loop.now()
        notifier.setStatus("a")
        notifier.setStatus("a")  // unchanged: nothing
        try run(milliseconds: 100)
        notifier.setStatus("b")  // within 0.5 s of "a": waits
        try run(milliseconds: 100)
        notifier.setStatus("c")  // replaces b
        try run(milliseconds: 1000)
        let statuses = sent.filter { $0.text.hasPrefix("STATUS=") }.map { ($0.time.duration(since: start), $0.text) }
        XCTAssertEqual(statuses.map(\.1), ["STATUS=a", "STATUS=c"])
        XCTAssertEqual(statuses.map(\.0), [.zero, .milliseconds(500)])
        notifier.setStatus("c")
        try run(milliseconds: 1000)
        XCTAssertEqual(sent.filter { $0.text.hasPrefix("STATUS=") }.count, 2, "unchanged status sent again")
        // Back to the sent text before the pending one went out: nothing is sent.
        notifier.setStatus("d")
        notifier.setStatus("d")
        try run(milliseconds: 0)
        notifier.setStatus("e")
        notifier.setStatus("d")
        try run(milliseconds: 1000)
        XCTAssertEqual(sent.filter { $0.text.hasPrefix("STATUS=") }.map(\.text).suffix(1), ["STATUS=d"])
    }

    func testStoppingOnceAndTheWatchdogGoesOnDuringShutdown() throws {
        let notifier = try makeNotifier()
        notifier.start()
        try run(milliseconds: 300)
        notifier.stopping()
        notifier.stopping()
        notifier.setStatus("engine on")  // ignored after STOPPING
        try run(milliseconds: 500)
        XCTAssertEqual(sent.filter { $0.text.hasPrefix("STOPPING=1") }.count, 1)
        XCTAssertFalse(sent.contains { $0.text == "STATUS=engine on" })
        XCTAssertEqual(sent.filter { $0.text == "WATCHDOG=1" }.count, 4, "the loop still pings while it flushes")
    }

    func testStatusFollowsTheViewModelOnlyWhenWhatItShowsChanges() throws {
        let notifier = try makeNotifier(watchdog: nil)
        let model = RunViewModel(linkName: "tcp://car:1", linkStatus: "connecting")
        // As `SystemdService` does: the model is told first, then the notifier reports it.
        let tell = { (event: RunEvent) in
            model.receive(event)
            notifier.report(model.snapshot)
        }
        notifier.report(model.snapshot)
        notifier.start()
        try run(milliseconds: 0)
        XCTAssertEqual(sent.first?.text, "READY=1\nSTATUS=engine off, speed 0 forward, link connecting")
        tell(.link(.up))
        try run(milliseconds: 600)
        var moving = DriveState()
        moving.engineOn = true
        moving.speed = 40
        tell(.step(DriveStep(state: moving, time: loop.now())))
        // Frames delivered every 50 ms change the view, not the status.
        for _ in 0..<20 {
            tell(.step(DriveStep(frames: [moving.motionFrame], state: moving, time: loop.now())))
            try run(milliseconds: 50)
        }
        XCTAssertEqual(sent.map(\.text), [
            "READY=1\nSTATUS=engine off, speed 0 forward, link connecting",
            "STATUS=engine off, speed 0 forward, link up",
            "STATUS=engine on, speed 40 forward, link up",
        ])
    }
}
