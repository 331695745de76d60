import CLinux
import Foundation
import Glibc
import XCTest

/// Job control with a real shell: carbridge runs as the foreground job of an interactive bash on a
/// pty (a plain child of the test is an orphaned process group, which ignores Ctrl-Z), and the keys
/// Ctrl-Z, `fg`, `bg` and Ctrl-\ are typed into that terminal as a driver would.
final class JobControlTests: XCTestCase {
    private var shell: JobControlShell?
    private var car: CarListener?

    override func tearDown() {
        shell?.kill()
        car?.stop()
        shell = nil
        car = nil
        super.tearDown()
    }

    /// Ctrl-Z while moving: the stop frame reaches the car before the process stops, nothing more while
    /// stopped, the terminal cooked for the shell; `fg`: raw again, nothing sent by itself, Speed+ starts
    /// from 0; Ctrl-\ while moving: `E,0,0,0` and exit 0.
    func testCtrlZStopsTheCarThenFgRestoresRawModeAndCtrlBackslashTurnsTheEngineOff() throws {
        let car = try CarListener()
        self.car = car
        let shell = try JobControlShell()
        self.shell = shell
        let pid = try shell.startCarbridge(["run", "--link", "tcp://127.0.0.1:\(car.port)", "--no-view",
                                            "--log-level", "debug"], car: car)

        shell.terminal.type("e++")
        XCTAssertTrue(car.waitForStream("M,0,20,1", count: 3), "not streaming S=20: \(car.received.map(\.text))\n\(shell.log)")
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "M,0,20,1"], shell.log)

        // Ctrl-Z.
        shell.terminal.type("\u{1A}")
        let suspendedAt = monotonicSeconds()
        XCTAssertTrue(car.wait(timeout: 2) { $0.driven.contains { $0.text == "M,0,0,1" } },
                      "no stop frame after Ctrl-Z: \(car.received.map(\.text))\n\(shell.log)")
        if let stop = car.driven.first(where: { $0.text == "M,0,0,1" }) {
            let latency = stop.time - suspendedAt
            print("JobControlTests: stop frame \(String(format: "%.1f", latency * 1000)) ms after Ctrl-Z")
            XCTAssertLessThan(latency, 0.2, "stop frame \(latency) s after Ctrl-Z")
        }
        XCTAssertTrue(waitUntil(timeout: 2) { processState(pid) == "T" },
                      "carbridge not stopped after Ctrl-Z (state \(processState(pid) ?? "gone"))\n\(shell.log)")
        XCTAssertTrue(waitUntil(timeout: 2) { shell.terminal.text.contains("Stopped") }, "the shell saw no stop")
        let countWhenStopped = car.received.count
        // the wait is the test: nothing reaches the car during 1 s of suspension.
        XCTAssertFalse(car.wait(timeout: 1) { $0.received.count > countWhenStopped },
                       "sent while stopped: \(car.received.suffix(from: countWhenStopped).map(\.text))")
        XCTAssertEqual(car.driven.last?.text, "M,0,0,1")
        XCTAssertEqual(processState(pid), "T", "carbridge did not stay stopped")
        XCTAssertEqual(car.closedCount, 0, "the link was closed during the suspension")
        XCTAssertTrue(shell.terminalIsCooked, "the terminal is not cooked while carbridge is stopped")

        // fg.
        shell.terminal.type("fg\n")
        XCTAssertTrue(waitUntil(timeout: 3) { shell.terminalIsRaw },
                      "the terminal is not raw again after fg\n\(shell.log)")
        XCTAssertNotEqual(processState(pid), "T")
        // the wait is the test: after fg nothing is sent by itself for 0.5 s.
        XCTAssertFalse(car.wait(timeout: 0.5) { $0.received.count > countWhenStopped },
                       "sent by itself after fg: \(car.received.suffix(from: countWhenStopped).map(\.text))")
        let resumedCount = car.received.count
        shell.terminal.type("+")
        XCTAssertTrue(car.wait { $0.received.count > resumedCount }, "nothing sent after Speed+\n\(shell.log)")
        XCTAssertEqual(distinctRuns(Array(car.received.suffix(from: resumedCount))), ["M,0,10,1"],
                       "Speed+ after fg did not start from 0\n\(shell.log)")
        XCTAssertEqual(car.connectionCount, 1, "the link was not kept")

        // Ctrl-\ while moving.
        shell.terminal.type("\u{1C}")
        let quitAt = monotonicSeconds()
        XCTAssertTrue(car.wait(timeout: 3) { $0.driven.contains { $0.text == "E,0,0,0" } },
                      "no engine off after Ctrl-\\: \(car.received.map(\.text))\n\(shell.log)")
        if let engineOff = car.driven.first(where: { $0.text == "E,0,0,0" }) {
            let latency = engineOff.time - quitAt
            print("JobControlTests: E,0,0,0 \(String(format: "%.1f", latency * 1000)) ms after Ctrl-\\")
            XCTAssertLessThan(latency, 0.5)
        }
        XCTAssertTrue(waitUntil(timeout: 5) { processState(pid) == nil }, "carbridge did not exit after Ctrl-\\")
        XCTAssertEqual(shell.lastExitStatus(), "0", shell.log)
        XCTAssertTrue(car.wait(timeout: 5) { $0.closedCount == 1 }, "connection not closed")
        XCTAssertEqual(car.driven.last?.text, "E,0,0,0")
        XCTAssertEqual(car.driven.filter { $0.text == "E,0,0,0" }.count, 1)
        XCTAssertTrue(car.wait(timeout: 2) { $0.closedCount == 1 }, "connection not closed")
    }

    /// Ctrl-Z, then `bg`: carbridge runs on in the background without touching the terminal (no raw
    /// mode, no view) and sends nothing; `fg`: raw mode and the view are back, and the car moves only
    /// when the driver presses Speed+.
    func testBgLeavesTheTerminalToTheShellUntilFg() throws {
        let car = try CarListener()
        self.car = car
        let shell = try JobControlShell()
        self.shell = shell
        let pid = try shell.startCarbridge(["run", "--link", "tcp://127.0.0.1:\(car.port)", "--log-level", "debug"],
                                           car: car)
        XCTAssertTrue(waitUntil(timeout: 2) { shell.terminal.text.contains("Engine off") }, "no live view")

        shell.terminal.type("e+")
        XCTAssertTrue(car.waitForStream("M,0,10,1", count: 3), "not streaming S=10: \(car.received.map(\.text))\n\(shell.log)")
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1"], shell.log)

        let beforeStop = shell.terminal.text.utf8.count
        shell.terminal.type("\u{1A}")
        XCTAssertTrue(car.wait(timeout: 2) { $0.driven.contains { $0.text == "M,0,0,1" } },
                      "no stop frame after Ctrl-Z: \(car.received.map(\.text))\n\(shell.log)")
        XCTAssertTrue(waitUntil(timeout: 2) { processState(pid) == "T" }, "not stopped\n\(shell.log)")
        XCTAssertTrue(waitUntil(timeout: 2) { shell.terminal.text.contains("Stopped") }, "the shell saw no stop")
        let stopOutput = shell.output(from: beforeStop)
        XCTAssertTrue(stopOutput.contains("\u{1B}[?25h"), "the cursor was not shown before the stop")
        let countWhenStopped = car.received.count

        // bg: running again, in the background.
        shell.terminal.type("bg\n")
        XCTAssertTrue(waitUntil(timeout: 2) { processState(pid).map { $0 != "T" } ?? false },
                      "not running after bg (state \(processState(pid) ?? "gone"))")
        let afterBg = shell.terminal.text.utf8.count
        // the wait is the test: 0.7 s in the background without touching the terminal or the car.
        XCTAssertFalse(waitUntil(timeout: 0.7) {
            !shell.terminalIsCooked || shell.output(from: afterBg).contains("Engine")
                || car.received.count > countWhenStopped || processState(pid) == "T"
        }, "carbridge acted in the background")
        XCTAssertTrue(shell.terminalIsCooked, "carbridge took the terminal while in the background")
        XCTAssertFalse(shell.output(from: afterBg).contains("Engine"), "the view was drawn in the background")
        XCTAssertEqual(car.received.count, countWhenStopped, "sent while in the background")
        XCTAssertNotEqual(processState(pid), "T", "stopped in the background (SIGTTOU/SIGTTIN?)")

        // fg: the terminal and the view are back.
        let beforeFg = shell.terminal.text.utf8.count
        shell.terminal.type("fg\n")
        XCTAssertTrue(waitUntil(timeout: 3) { shell.terminalIsRaw }, "the terminal is not raw after fg\n\(shell.log)")
        XCTAssertTrue(waitUntil(timeout: 2) { shell.output(from: beforeFg).contains("Engine ON") },
                      "the view was not redrawn after fg")
        XCTAssertTrue(shell.output(from: beforeFg).contains("\u{1B}[?25l"), "the cursor was not hidden again")
        // the wait is the test: after fg nothing is sent by itself for 0.3 s.
        XCTAssertFalse(car.wait(timeout: 0.3) { $0.received.count > countWhenStopped }, "sent by itself after fg")
        shell.terminal.type("+")
        XCTAssertTrue(car.wait { $0.received.count > countWhenStopped }, "nothing sent after Speed+\n\(shell.log)")
        XCTAssertEqual(distinctRuns(Array(car.received.suffix(from: countWhenStopped))), ["M,0,10,1"], shell.log)

        shell.terminal.type("q")
        XCTAssertTrue(waitUntil(timeout: 5) { processState(pid) == nil }, "carbridge did not exit on q")
        XCTAssertEqual(shell.lastExitStatus(), "0", shell.log)
        XCTAssertTrue(car.wait(timeout: 5) { $0.closedCount == 1 }, "connection not closed")
        XCTAssertEqual(car.driven.last?.text, "E,0,0,0")
        XCTAssertTrue(shell.terminalIsCooked, "the terminal was not restored on exit")
    }

    /// `carbridge run &`: stopped by the terminal (SIGTTOU) before it connects, as any terminal
    /// program started in the background; `fg` lets it take the terminal, connect and drive.
    func testStartedInTheBackgroundWaitsForFgBeforeConnecting() throws {
        let car = try CarListener()
        self.car = car
        let shell = try JobControlShell()
        self.shell = shell
        let pid = try shell.launchInBackground(["run", "--link", "tcp://127.0.0.1:\(car.port)", "--no-view",
                                                "--log-level", "debug"], marker: "127.0.0.1:\(car.port)")
        XCTAssertTrue(waitUntil(timeout: 3) { processState(pid) == "T" },
                      "not stopped in the background (state \(processState(pid) ?? "gone"))\n\(shell.log)")
        // the wait is the test: stopped in the background, it does not connect for 0.3 s.
        XCTAssertFalse(car.wait(timeout: 0.3) { $0.connectionCount > 0 }, "connected while stopped in the background")
        XCTAssertTrue(shell.terminalIsCooked, "took the terminal from the background")

        shell.terminal.type("fg\n")
        XCTAssertTrue(car.wait(timeout: 5) { $0.connectionCount == 1 && !$0.handshakes.isEmpty }, shell.log)
        XCTAssertTrue(waitUntil(timeout: 3) { shell.terminalIsRaw }, "the terminal is not raw after fg\n\(shell.log)")
        shell.terminal.type("e+")
        XCTAssertTrue(car.waitForDrivenRuns(1), "nothing sent after Speed+\n\(shell.log)")
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1"], shell.log)
        shell.terminal.type("q")
        XCTAssertTrue(waitUntil(timeout: 5) { processState(pid) == nil }, "carbridge did not exit on q")
        XCTAssertEqual(shell.lastExitStatus(), "0", shell.log)
        // The car reads on a thread of its own: its last bytes may come in after the process is gone.
        XCTAssertTrue(car.wait(timeout: 5) { $0.closedCount == 1 }, "connection not closed")
        XCTAssertEqual(car.driven.last?.text, "E,0,0,0")
    }

    /// `kill -QUIT` is handled as SIGTERM: engine off flushed to the car, exit 0.
    func testSigquitWhileMovingSendsEngineOffAndExitsZero() throws {
        let (car, terminal, process) = try startDriving(["--no-view"])
        defer { terminal.closeAll(); car.stop() }
        terminal.type("e++")
        XCTAssertTrue(car.waitForStream("M,0,20,1", count: 3), "not streaming S=20: \(car.received.map(\.text))")
        let quitAt = monotonicSeconds()
        process.signal(SIGQUIT)
        let status = process.waitForExit()
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertEqual(process.process.terminationReason, .exit, "killed by the signal")
        XCTAssertTrue(car.wait { $0.closedCount == 1 }, "connection not closed")
        XCTAssertEqual(car.handshakes, ["E,0,0,0"])
        XCTAssertEqual(distinctRuns(car.driven), ["M,0,10,1", "M,0,20,1", "E,0,0,0"], "\(car.received.map(\.text))")
        if let engineOff = car.driven.last, engineOff.text == "E,0,0,0" {
            print("JobControlTests: E,0,0,0 \(String(format: "%.1f", (engineOff.time - quitAt) * 1000)) ms after SIGQUIT")
        }
        var mode = termios()
        XCTAssertEqual(tcgetattr(terminal.slave, &mode), 0)
        XCTAssertNotEqual(mode.c_lflag & tcflag_t(ICANON), 0, "canonical mode not restored")
    }
}

/// The pid of the carbridge process whose command line contains `marker` (a unique port).
private func findCarbridge(containing marker: String) -> pid_t? {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
    for entry in entries {
        guard let pid = pid_t(entry),
              let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        if arguments.first?.hasSuffix("carbridge") == true, arguments.contains(where: { $0.contains(marker) }) {
            return pid
        }
    }
    return nil
}

/// An interactive bash with job control (`-i`, so `set -m`) on its own pty, as its session leader:
/// started with posix_spawn(POSIX_SPAWN_SETSID) opening the pty's slave, which makes that the
/// controlling terminal. No readline (`--noediting`): at the prompt the terminal is plainly cooked.
final class JobControlShell {
    let terminal: PseudoTerminal
    let pid: pid_t
    private let logFile: String
    private var carbridgePID: pid_t?
    private var statusQueries = 0

    init() throws {
        terminal = try PseudoTerminal()
        logFile = NSTemporaryDirectory() + "carbridge-jobcontrol-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        guard let slaveName = ttyname(terminal.slave).map({ String(cString: $0) }) else { throw POSIXError(.ENOTTY) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, terminal.master)
        posix_spawn_file_actions_addclose(&actions, terminal.slave)
        posix_spawn_file_actions_addopen(&actions, 0, slaveName, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc)
        posix_spawnattr_setflags(&attributes, Int16(setsid | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = ["/bin/bash", "--norc", "--noprofile", "--noediting", "-i"]
        let environment = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TERM=dumb", "LANG=C",
                           "PS1=jobshell$ ", "HISTFILE="]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        pid = child
        guard waitUntil(timeout: 5, { self.terminal.text.contains("jobshell$ ") }) else {
            kill()
            throw ShellNotReady(output: terminal.text)
        }
    }

    /// Types the command line into the shell (stderr to a log file) and waits (bounded) until carbridge
    /// has connected to `car`, got its handshake out (the bridge sends it when it sees the link up)
    /// and put the terminal into raw mode; returns its pid.
    func startCarbridge(_ arguments: [String], car: CarListener) throws -> pid_t {
        let command = ([try carbridgeExecutable().path] + arguments).joined(separator: " ") + " 2>\(logFile)"
        terminal.type(command + "\n")
        guard car.wait(timeout: 10, { $0.connectionCount == 1 && !$0.handshakes.isEmpty }) else {
            throw ShellNotReady(output: terminal.text + "\n" + log)
        }
        guard waitUntil(timeout: 5, { self.terminalIsRaw }),
              let found = findCarbridge(containing: "127.0.0.1:\(car.port)") else {
            throw ShellNotReady(output: terminal.text + "\n" + log)
        }
        carbridgePID = found
        return found
    }

    /// Types `carbridge ARGUMENTS &` (stderr to the log file) and returns its pid, found by `marker`.
    func launchInBackground(_ arguments: [String], marker: String) throws -> pid_t {
        let command = ([try carbridgeExecutable().path] + arguments).joined(separator: " ") + " 2>\(logFile) &"
        terminal.type(command + "\n")
        var found: pid_t?
        guard waitUntil(timeout: 5, { found = findCarbridge(containing: marker); return found != nil }),
              let found else { throw ShellNotReady(output: terminal.text + "\n" + log) }
        carbridgePID = found
        return found
    }

    /// carbridge's stderr so far.
    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// What the terminal showed after the first `offset` bytes.
    func output(from offset: Int) -> String {
        let bytes = Array(terminal.text.utf8)
        return String(decoding: bytes[min(offset, bytes.count)...], as: UTF8.self)
    }

    private var lflag: tcflag_t? {
        var mode = termios()
        return tcgetattr(terminal.slave, &mode) == 0 ? mode.c_lflag : nil
    }

    /// Canonical input with echo: what the shell reads its commands in.
    var terminalIsCooked: Bool {
        guard let lflag else { return false }
        return lflag & tcflag_t(ICANON) != 0 && lflag & tcflag_t(ECHO) != 0
    }

    /// carbridge's keyboard mode: no canonical input, no echo.
    var terminalIsRaw: Bool {
        guard let lflag else { return false }
        return lflag & tcflag_t(ICANON) == 0 && lflag & tcflag_t(ECHO) == 0
    }

    /// Asks the shell for `$?` (call it only after the job ended: the keys go to the shell).
    func lastExitStatus() -> String? {
        statusQueries += 1
        let marker = "status\(statusQueries)="
        let before = terminal.text.utf8.count
        terminal.type("echo \(marker)$?\n")
        var status: String?
        _ = waitUntil(timeout: 3) {
            let text = self.output(from: before)
            // The echoed command line shows `$?`; the answer shows digits.
            guard let range = text.range(of: marker + "[0-9]+", options: .regularExpression) else { return false }
            status = String(text[range].dropFirst(marker.count))
            return true
        }
        return status
    }

    /// Ends everything this shell started (bounded): carbridge, then the shell; closes the pty.
    func kill() {
        if let carbridgePID, processState(carbridgePID) != nil {
            Glibc.kill(carbridgePID, SIGKILL)
        }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitUntil(timeout: 3) { waitpid(self.pid, &status, WNOHANG) != 0 }
        terminal.closeMaster()
        terminal.closeAll()
        unlink(logFile)
    }
}

/// The shell or carbridge did not get ready in time.
struct ShellNotReady: Error, CustomStringConvertible {
    let output: String
    var description: String { "the job-control shell did not get ready; terminal output:\n\(output)" }
}
