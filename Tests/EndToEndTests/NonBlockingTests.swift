import CLinux
import Foundation
import Glibc
import XCTest

/// Nothing may block the event loop: a blocked loop cannot send the stop frame.
final class NonBlockingTests: XCTestCase {
    /// stderr is a pipe nobody reads (a stuck journal) and the car floods lines back, each of them
    /// logged: frames still stream every 50 ms and SIGTERM still stops the car and the process.
    func testAStalledStderrAndAFloodOfCarLinesDoNotStopTheStream() throws {
        let (car, terminal, process) = try startDriving(["--no-view"], stallStderr: true)
        defer { terminal.closeAll(); car.stop() }
        // Thousands of lines at once fill stderr's pipe (64 KiB); then 4000 lines/s (a 115200 baud
        // serial line full of short lines) while driving.
        let floodEnd = monotonicSeconds() + 2.5
        let flooder = Thread {
            car.flood("OK\n", count: 3000)
            while monotonicSeconds() < floodEnd {
                usleep(50_000)  // the wait is the test: the flood's rate, 200 lines every 50 ms
                car.flood("OK\n", count: 200)
            }
        }
        flooder.start()
        // Full: its 16 pages each hold the writes that fitted whole (54 KB was seen); a few KB of
        // log lines would not come near it.
        XCTAssertTrue(waitUntil { process.stderrPipeFill >= 40_000 }, "the flood did not fill stderr's pipe: \(process.stderrPipeFill) bytes")
        terminal.type("e+")
        XCTAssertTrue(car.wait { $0.driven.filter { $0.text == "M,0,10,1" }.count >= 40 },
                      "the stream stopped: \(distinctRuns(car.driven))")

        let streamed = car.driven.filter { $0.text == "M,0,10,1" }
        let intervals = streamIntervals(streamed)
        let middle = median(intervals)
        print("NonBlockingTests: stalled stderr + flood: \(streamed.count) frames, median interval \(String(format: "%.1f", middle)) ms, max \(String(format: "%.1f", intervals.max() ?? .nan)) ms")
        XCTAssertGreaterThan(streamed.count, 30, "the stream stopped: \(distinctRuns(car.driven))")
        XCTAssertEqual(middle, 50, accuracy: 8)

        let signalled = monotonicSeconds()
        process.signal(SIGTERM)
        XCTAssertTrue(car.wait(timeout: 3) { $0.driven.last?.text == "E,0,0,0" }, "no E,0,0,0 after SIGTERM")
        if let stop = car.driven.last(where: { $0.text == "E,0,0,0" }) {
            print("NonBlockingTests: E,0,0,0 \(String(format: "%.1f", (stop.time - signalled) * 1000)) ms after SIGTERM")
            XCTAssertLessThan(stop.time - signalled, 0.5)
        }
        XCTAssertEqual(process.waitForExit(timeout: 3), 0)
        let exitTime = monotonicSeconds() - signalled
        print("NonBlockingTests: exit \(String(format: "%.0f", exitTime * 1000)) ms after SIGTERM with stderr stalled")
        XCTAssertLessThan(exitTime, 2.0)
    }

    /// After a stall stderr is read again: the queued lines and the drop count come out, and the
    /// shutdown messages reach stderr before the process exits.
    func testLogLinesDroppedWhileStderrStalledAreCountedAndTheShutdownIsLogged() throws {
        let (car, terminal, process) = try startDriving(["--no-view"], stallStderr: true)
        defer { terminal.closeAll(); car.stop() }
        terminal.type("e")
        for _ in 0..<10 {
            car.flood("OK\n", count: 500)
            usleep(50_000)  // the wait is the test: the flood's rate, 500 lines every 50 ms
        }
        // Unstall: read until the writer, catching up, has counted what it dropped.
        let dropped = #"carbridge: \d+ log lines dropped \(stderr was not being read\)"#
        var text = ""
        XCTAssertTrue(waitUntil {
            text += process.readStalledStderr()
            return text.range(of: dropped, options: .regularExpression) != nil
        }, String(text.suffix(2000)))
        // Read stderr from now on: the shutdown messages must be there at exit.
        process.signal(SIGTERM)
        var rest = ""
        waitUntil(timeout: 3) {
            rest += process.readStalledStderr()
            return !process.process.isRunning
        }
        rest += process.readStalledStderr()
        XCTAssertEqual(process.waitForExit(timeout: 3), 0)
        XCTAssertTrue(rest.contains("shutting down (SIGTERM)"), "after SIGTERM: \(rest.suffix(2000))\nbefore: \(text.suffix(1000))")
        XCTAssertTrue(rest.contains("shutdown: "), String(rest.suffix(2000)))
    }

    /// `--link stdout` with a stdout nobody reads: the dry run keeps running and SIGTERM ends it.
    func testDryRunWithAStalledStdoutStillStopsOnSIGTERM() throws {
        let terminal = try PseudoTerminal()
        defer { terminal.closeAll() }
        let out = Pipe()
        let writeFD = out.fileHandleForWriting.fileDescriptor
        _ = cb_fcntl_set(writeFD, 1031, 4096)  // F_SETPIPE_SZ
        let flags = cb_fcntl_get(writeFD, F_GETFL)
        _ = cb_fcntl_set(writeFD, F_SETFL, flags | O_NONBLOCK)
        let junk = [UInt8](repeating: UInt8(ascii: "#"), count: 1023) + [10]
        while junk.withUnsafeBytes({ write(writeFD, $0.baseAddress, $0.count) }) > 0 {}
        _ = cb_fcntl_set(writeFD, F_SETFL, flags)
        let process = try CarbridgeProcess(
            arguments: ["run", "--link", "stdout", "--log-level", "debug", "--period-ms", "10"],
            terminal: terminal, stdout: out.fileHandleForWriting)
        XCTAssertTrue(waitUntil { process.stderr.contains("link up: stdout") && terminal.isRaw },
                      "the link did not come up:\n\(process.stderr)")
        terminal.type("e+")
        // the wait is the test: 1 s of frames every 10 ms (none of them observable) into the stalled stdout.
        usleep(1_000_000)
        let (status, exitTime) = process.terminate(timeout: 3)
        print("NonBlockingTests: dry run with stdout stalled exited \(String(format: "%.0f", exitTime * 1000)) ms after SIGTERM")
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertLessThan(exitTime, 2.0)
        XCTAssertTrue(process.stderr.contains("shutting down (SIGTERM)"), process.stderr)
    }

    /// The keyboard's terminal is never switched to O_NONBLOCK (the shell shares its open file
    /// description), neither while carbridge runs (with the live view) nor after it exits.
    func testTheTerminalIsNeverLeftNonBlocking() throws {
        let (car, terminal, process) = try startDriving()
        defer { terminal.closeAll(); car.stop() }
        XCTAssertEqual(cb_fcntl_get(terminal.slave, F_GETFL) & O_NONBLOCK, 0, "O_NONBLOCK set while running")
        terminal.type("e+")
        XCTAssertTrue(car.waitForDrivenRuns(1), "\(car.received.map(\.text))")
        XCTAssertEqual(distinctRuns(car.driven).first, "M,0,10,1")
        XCTAssertEqual(cb_fcntl_get(terminal.slave, F_GETFL) & O_NONBLOCK, 0, "O_NONBLOCK set while running")
        terminal.type("q")
        XCTAssertEqual(process.waitForExit(), 0, process.stderr)
        XCTAssertEqual(cb_fcntl_get(terminal.slave, F_GETFL) & O_NONBLOCK, 0, "O_NONBLOCK left after exit")
        // The pty's reader thread may not have read the last bytes yet: wait for them (bounded).
        XCTAssertTrue(waitUntil(timeout: 2) { terminal.text.contains("stopped;") }, "the last screen did not reach the terminal")
    }

    /// The DNS server does not answer (a private /etc/resolv.conf pointing at a UDP socket that
    /// never replies, in a mount namespace of carbridge's own): SIGTERM during the lookup still
    /// ends the run at once.
    func testAHangingNameLookupDoesNotDelayTheStop() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), getuid() == 0 else {
            throw XCTSkip("needs root and unshare(1) for a private /etc/resolv.conf")
        }
        // A "DNS server" that receives queries and never answers.
        let dns = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(dns) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.77.0.53")
        address.sin_port = UInt16(53).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(dns, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw XCTSkip("cannot bind 127.77.0.53:53 (errno \(errno))") }
        let resolvConf = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-resolv-\(getpid()).conf")
        try "nameserver 127.77.0.53\noptions timeout:4 attempts:1\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: resolvConf) }

        let port = try unusedLoopbackPort()
        let process = try CarbridgeProcess(
            arguments: ["run", "--link", "tcp://car.carbridge-test.example:\(port)", "--log-level", "debug"],
            terminal: nil,
            launcher: ["/usr/bin/unshare", "-m", "sh", "-c",
                       "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"", resolvConf.path])
        // Wait until the lookup is under way: the query reached the silent server.
        var pfd = pollfd(fd: dns, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pfd, 1, 5000), 1, "no DNS query arrived:\n\(process.stderr)")
        let (status, exitTime) = process.terminate(timeout: 10)
        print("NonBlockingTests: SIGTERM during a hanging DNS lookup: exit after \(String(format: "%.0f", exitTime * 1000)) ms")
        XCTAssertEqual(status, 0, process.stderr)
        XCTAssertLessThan(exitTime, 1.0, "the stop waited for the lookup:\n\(process.stderr)")
        XCTAssertTrue(process.stderr.contains("shutting down (SIGTERM)"), process.stderr)
    }
}
