import CLinux
import Foundation
import Glibc
import XCTest

/// systemd's side of `Type=notify` (sd_notify(3)): an AF_UNIX datagram socket whose path (or
/// abstract name, `@…`) goes to carbridge as `NOTIFY_SOCKET`; every datagram is recorded with its
/// CLOCK_MONOTONIC arrival time.
final class NotifySocket: @unchecked Sendable {
    /// What `NOTIFY_SOCKET` must say to reach this socket.
    let address: String
    private let fd: Int32
    private let directory: URL?
    private let lock = NSLock()
    private var received: [(time: Double, text: String)] = []
    private var running = true
    private var syncsSeen = 0
    private var syncsSent = 0
    private let boundAddress: sockaddr_un
    private let boundSize: socklen_t

    /// A socket in a fresh temporary directory, or with `abstract` in the abstract namespace.
    init(abstract: Bool = false) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes: [UInt8]
        if abstract {
            let name = "carbridge-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            self.address = "@" + name
            self.directory = nil
            pathBytes = [0] + Array(name.utf8)
        } else {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("carbridge-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            self.address = directory.appendingPathComponent("notify").path
            pathBytes = Array(self.address.utf8)
        }
        let length = pathBytes.count
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
        }
        // An abstract name's length is exactly its bytes (no terminating NUL).
        let size = socklen_t(MemoryLayout<sa_family_t>.size + length + (abstract ? 0 : 1))
        boundAddress = address
        boundSize = size
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        Thread { [weak self] in self?.read() }.start()
    }

    deinit {
        close(fd)
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func stop() {
        lock.lock(); running = false; lock.unlock()
    }

    private func read() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            lock.lock(); let keepGoing = running; lock.unlock()
            if !keepGoing { return }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 100) <= 0 { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n <= 0 { continue }
            let text = String(decoding: buffer[0..<n], as: UTF8.self)
            lock.lock()
            if text == Self.syncMessage { syncsSeen += 1 } else { received.append((monotonicSeconds(), text)) }
            lock.unlock()
        }
    }

    private static let syncMessage = "X_CARBRIDGE_TEST_SYNC=1"

    /// Sends this socket a datagram of the test's own and waits (bounded) until it was read: every
    /// datagram queued before it (all that carbridge sent so far) is then recorded.
    @discardableResult
    func sync(timeout: Double = 10) -> Bool {
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard sender >= 0 else { return false }
        defer { close(sender) }
        lock.lock(); syncsSent += 1; let wanted = syncsSent; lock.unlock()
        var address = boundAddress
        let bytes = Array(Self.syncMessage.utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                bytes.withUnsafeBytes { sendto(sender, $0.baseAddress, $0.count, 0, target, boundSize) }
            }
        }
        guard sent == bytes.count else { return false }
        return waitUntil(timeout: timeout) { self.lock.withLock { self.syncsSeen >= wanted } }
    }

    /// Every datagram so far, in order.
    var messages: [(time: Double, text: String)] {
        lock.lock(); defer { lock.unlock() }
        return received
    }

    /// Every `KEY=value` assignment so far (a datagram may hold several, one a line), with its time.
    var assignments: [(time: Double, text: String)] {
        messages.flatMap { message in message.text.split(separator: "\n").map { (message.time, String($0)) } }
    }

    /// The arrival times of `WATCHDOG=1`.
    var watchdogPings: [Double] { assignments.filter { $0.text == "WATCHDOG=1" }.map(\.time) }

    /// The `STATUS=` texts, in order.
    var statuses: [(time: Double, text: String)] {
        assignments.filter { $0.text.hasPrefix("STATUS=") }.map { ($0.time, String($0.text.dropFirst(7))) }
    }

    @discardableResult
    func wait(timeout: Double = 10, _ condition: (NotifySocket) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(self) }
    }
}

/// The intervals between consecutive times, in seconds.
private func gaps(_ times: [Double]) -> [Double] {
    zip(times, times.dropFirst()).map { $1 - $0 }
}

/// `Type=notify` against the real binary: READY=1, WATCHDOG=1 from the loop, STATUS=, STOPPING=1.
final class SystemdNotifyTests: XCTestCase {
    /// `WATCHDOG_USEC` for these tests: pings every 200 ms.
    private let watchdogUsec = 400_000

    private func start(
        _ notify: NotifySocket, car: CarListener, environment: [String: String] = [:], extra: [String] = []
    ) throws -> (PseudoTerminal, CarbridgeProcess) {
        let terminal = try PseudoTerminal()
        var env = ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "\(watchdogUsec)"]
        env.merge(environment) { $1 }
        let process = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://127.0.0.1:\(car.port)", "--log-level", "debug", "--no-view"] + extra,
            terminal: terminal, environment: env)
        return (terminal, process)
    }

    func testReadyWatchdogStatusAndStopping() throws {
        let notify = try NotifySocket()
        let car = try CarListener()
        let (terminal, process) = try start(notify, car: car)
        defer { terminal.closeAll(); car.stop(); notify.stop() }

        XCTAssertTrue(notify.wait { $0.assignments.contains { $0.text == "READY=1" } }, "no READY=1:\n\(process.stderr)")
        XCTAssertTrue(car.wait { $0.connectionCount == 1 }, process.stderr)
        // READY=1 is the first message (nothing before the loop runs).
        XCTAssertEqual(notify.messages.first?.text.split(separator: "\n").first, "READY=1")
        XCTAssertTrue(notify.wait { $0.statuses.contains { $0.text == "engine off, speed 0 forward, link up" } },
                      "\(notify.statuses.map(\.text))")

        terminal.type("e++")
        XCTAssertTrue(car.wait(timeout: 3) { $0.driven.contains { $0.text == "M,0,20,1" } }, process.stderr)
        XCTAssertTrue(notify.wait(timeout: 3) { $0.statuses.last?.text == "engine on, speed 20 forward, link up" },
                      "\(notify.statuses.map(\.text))")
        // Streaming at S=20 for 25 frames (1.25 s), but the status does not change, so no STATUS.
        let statusesBefore = notify.statuses.count
        let streamStart = car.driven.count
        XCTAssertTrue(car.wait { $0.driven.count - streamStart >= 25 }, "not streaming")
        XCTAssertEqual(notify.statuses.count, statusesBefore, "STATUS sent without a change: \(notify.statuses.map(\.text))")

        // Three changes within 100 ms: rate-limited (≥ 0.5 s apart), the newest wins.
        terminal.type("+g-")
        XCTAssertTrue(notify.wait(timeout: 3) { $0.statuses.last?.text == "engine on, speed 20 reverse, link up" },
                      "\(notify.statuses.map(\.text))")
        // the wait is the test: no further STATUS in the next 0.7 s (the newest already won).
        XCTAssertFalse(notify.wait(timeout: 0.7) { $0.statuses.count - statusesBefore > 2 }, "\(notify.statuses.map(\.text))")
        let statusTimes = notify.statuses.map(\.time)
        let statusGaps = gaps(statusTimes)
        print("SystemdNotifyTests: STATUS gaps (s): \(statusGaps.map { String(format: "%.3f", $0) })")
        XCTAssertTrue(statusGaps.allSatisfy { $0 >= 0.45 }, "STATUS more often than every 0.5 s: \(statusGaps)")
        XCTAssertLessThanOrEqual(notify.statuses.count - statusesBefore, 2, "\(notify.statuses.map(\.text))")

        XCTAssertTrue(notify.wait { $0.watchdogPings.count >= 10 }, "too few watchdog pings")
        let pings = notify.watchdogPings
        let intervals = gaps(pings)
        print("SystemdNotifyTests: \(pings.count) WATCHDOG=1, interval median \(String(format: "%.3f", median(intervals))) s, max \(String(format: "%.3f", intervals.max() ?? 0)) s")
        XCTAssertGreaterThanOrEqual(pings.count, 10, "too few watchdog pings")
        // Half of WATCHDOG_USEC; the slack is for a loaded machine (the limit that matters is the next line's).
        XCTAssertEqual(median(intervals), 0.2, accuracy: 0.08, "not half of WATCHDOG_USEC")
        XCTAssertLessThan(intervals.max() ?? 0, 0.4, "a ping came later than WATCHDOG_USEC: systemd would have killed it")

        let terminated = monotonicSeconds()
        let (status, _) = process.terminate()
        XCTAssertEqual(status, 0, process.stderr)
        let stopping = notify.assignments.first { $0.text == "STOPPING=1" }
        XCTAssertNotNil(stopping, "no STOPPING=1: \(notify.assignments.map(\.text))")
        if let stopping { XCTAssertGreaterThanOrEqual(stopping.time, terminated) }
        XCTAssertTrue(car.wait(timeout: 5) { $0.closedCount == 1 }, "connection not closed")
        XCTAssertEqual(car.driven.last?.text, "E,0,0,0")
    }

    func testAbstractSocketAndAWatchdogForAnotherProcess() throws {
        let notify = try NotifySocket(abstract: true)
        let car = try CarListener()
        // WATCHDOG_PID names another process (PID 1): the watchdog is not this one's (sd_watchdog_enabled).
        let (terminal, process) = try start(notify, car: car, environment: ["WATCHDOG_PID": "1"])
        defer { terminal.closeAll(); car.stop(); notify.stop() }
        XCTAssertTrue(notify.wait { $0.assignments.contains { $0.text == "READY=1" } }, "no READY=1:\n\(process.stderr)")
        // the wait is the test: no ping in 0.8 s (4 of WATCHDOG_USEC's half-intervals).
        XCTAssertFalse(notify.wait(timeout: 0.8) { !$0.watchdogPings.isEmpty }, "pinged a watchdog meant for another process")
        XCTAssertEqual(process.terminate().status, 0, process.stderr)
        XCTAssertTrue(notify.assignments.contains { $0.text == "STOPPING=1" })
    }

    func testNoNotificationsWithoutNotifySocket() throws {
        let notify = try NotifySocket()
        let (car, terminal, process) = try startDriving(["--no-view"])
        defer { terminal.closeAll(); car.stop(); notify.stop() }
        // the wait is the test: nothing reaches a socket nobody named in 0.5 s of running.
        XCTAssertFalse(notify.wait(timeout: 0.5) { !$0.messages.isEmpty })
        XCTAssertEqual(process.terminate().status, 0, process.stderr)
        XCTAssertTrue(notify.messages.isEmpty)
        XCTAssertFalse(process.stderr.contains("watchdog"), process.stderr)
    }

    /// A `NOTIFY_SOCKET` or `WATCHDOG_USEC` that systemd would not set is a clear error before anything
    /// connects (it was ignored by libsystemd's sd_notify, so a service under it never became ready).
    func testABadNotifySocketOrWatchdogValueIsAnErrorBeforeTheCarConnects() throws {
        let notify = try NotifySocket()
        let car = try CarListener()
        defer { car.stop(); notify.stop() }
        for (environment, message) in [
            (["NOTIFY_SOCKET": "run/systemd/notify"],
             "carbridge: NOTIFY_SOCKET=run/systemd/notify: not an absolute path or an @abstract socket name"),
            (["WATCHDOG_USEC": "2s"], "carbridge: WATCHDOG_USEC=2s: not a positive number of microseconds"),
        ] {
            let (terminal, process) = try start(notify, car: car, environment: environment)
            defer { terminal.closeAll() }
            XCTAssertEqual(process.waitForExit(), 1, process.stderr)
            XCTAssertTrue(process.stderr.contains(message), process.stderr)
        }
        XCTAssertEqual(car.connectionCount, 0, "nothing connected to the car")
        XCTAssertTrue(notify.messages.isEmpty)
    }

    /// The process is stopped (SIGSTOP, as a hang would): no pings; SIGCONT: they resume.
    func testStoppedProcessSendsNoPings() throws {
        let notify = try NotifySocket()
        let car = try CarListener()
        let (terminal, process) = try start(notify, car: car)
        defer { terminal.closeAll(); car.stop(); notify.stop() }
        XCTAssertTrue(notify.wait { $0.watchdogPings.count >= 3 }, "no pings:\n\(process.stderr)")
        process.signal(SIGSTOP)
        XCTAssertTrue(waitUntil { processState(process.process.processIdentifier) == "T" }, "not stopped by SIGSTOP")
        XCTAssertTrue(notify.sync(), "the notify socket's reader is stuck")  // pings sent before the stop are recorded
        let stopped = monotonicSeconds()
        // the wait is the test: stopped for 1 s, no ping arrives.
        XCTAssertFalse(notify.wait(timeout: 1) { $0.watchdogPings.contains { $0 > stopped } }, "pings while the process was stopped")
        let continued = monotonicSeconds()
        let during = notify.watchdogPings.filter { $0 > stopped && $0 < continued }
        process.signal(SIGCONT)
        XCTAssertEqual(during, [], "pings while the process was stopped")
        XCTAssertTrue(notify.wait(timeout: 2) { $0.watchdogPings.filter { $0 > continued }.count >= 3 }, "pings did not resume")
        XCTAssertEqual(process.terminate().status, 0, process.stderr)
    }

    /// The event loop hangs (the debug build's `CARBRIDGE_TEST_HANG_AFTER_MS`) while the car moves: the
    /// pings stop at once although the process and its other threads live on (the log writer still
    /// writes the hook's warning), which is what makes systemd kill and restart it; the car, which
    /// kept its last command, is stopped by the restarted process's handshake.
    func testHungLoopStopsThePingsAndTheRestartStopsTheCar() throws {
        let notify = try NotifySocket()
        let car = try CarListener()
        let (terminal, process) = try start(notify, car: car, environment: ["CARBRIDGE_TEST_HANG_AFTER_MS": "2500"])
        defer { terminal.closeAll(); car.stop(); notify.stop() }
        XCTAssertTrue(notify.wait { $0.assignments.contains { $0.text == "READY=1" } }, "no READY=1:\n\(process.stderr)")
        XCTAssertTrue(car.wait { $0.connectionCount == 1 && !$0.handshakes.isEmpty }, process.stderr)
        terminal.type("e++")
        XCTAssertTrue(car.wait(timeout: 2) { $0.driven.contains { $0.text == "M,0,20,1" } }, process.stderr)

        let hung = timeWhenText({ process.stderr }, contains: "the event loop hangs now", timeout: 6)
        XCTAssertNotNil(hung, "the hook never fired:\n\(process.stderr)")
        let hangSeen = monotonicSeconds()
        // the wait is the test: 1.5 s of a hung loop without a ping.
        XCTAssertFalse(notify.wait(timeout: 1.5) { $0.watchdogPings.contains { $0 > hangSeen + 0.05 } },
                       "pinged while the loop hung: \(notify.watchdogPings.suffix(5))")
        let pings = notify.watchdogPings
        let beforeHang = pings.filter { $0 < hangSeen - 0.3 }
        XCTAssertGreaterThanOrEqual(beforeHang.count, 8, "too few pings before the hang")
        let lastPing = pings.last ?? 0
        let lastFrame = car.driven.last
        print("SystemdNotifyTests: last ping \(String(format: "%.0f", (hangSeen - lastPing) * 1000)) ms before the hang was seen; none in the 1.5 s after")
        XCTAssertLessThan(hangSeen - lastPing, 0.3, "pings had stopped before the hang")
        XCTAssertTrue(pings.filter { $0 > hangSeen + 0.05 }.isEmpty, "pinged while the loop hung: \(pings.suffix(5))")
        XCTAssertTrue(process.process.isRunning, "the process died by itself")
        XCTAssertEqual(lastFrame?.text, "M,0,20,1", "the car was not left moving (nothing can stop it while the loop hangs)")

        // systemd's watchdog kills it (SIGABRT; SIGKILL here) and restarts it: the new process's first frame stops the car.
        process.signal(SIGKILL)
        _ = process.waitForExit(timeout: 5)
        let restarted = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://127.0.0.1:\(car.port)", "--no-keyboard", "--no-view"], terminal: nil)
        XCTAssertTrue(car.wait { $0.received(onConnection: 2).count >= 1 }, restarted.stderr)
        XCTAssertEqual(car.received(onConnection: 2).first?.text, "E,0,0,0")
        XCTAssertEqual(restarted.terminate().status, 0, restarted.stderr)
    }
}

/// Waits (bounded) until `text()` contains `fragment`; the monotonic time it was first seen.
func timeWhenText(_ text: () -> String, contains fragment: String, timeout: Double) -> Double? {
    waitUntil(timeout: timeout) { text().contains(fragment) } ? monotonicSeconds() : nil
}
