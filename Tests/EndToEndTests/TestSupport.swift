import CLinux
import Foundation
import Glibc
import XCTest

/// Seconds on CLOCK_MONOTONIC (the clock carbridge streams on).
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass; whether it held. The one
/// place these tests wait: always for an event (a frame the car received, a line carbridge wrote, a
/// process state, a file), never for time itself. Where an interval is what a test checks ("nothing
/// is sent for 0.5 s"), it waits here for the forbidden event and expects `false` (marked
/// `// the wait is the test:`), so it fails as soon as that event happens.
@discardableResult
func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = monotonicSeconds() + timeout
    while monotonicSeconds() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// The state letter of `/proc/PID/stat` (`R`, `S`, `T` stopped, …); nil once the process is gone or a zombie.
func processState(_ pid: pid_t) -> String? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.range(of: ") ", options: .backwards) else { return nil }
    let state = String(stat[close.upperBound...].prefix(1))
    return state == "Z" || state == "X" ? nil : state
}

/// The built `carbridge` executable: `$CARBRIDGE_BIN` when set (to run these tests against another
/// build, e.g. an older commit's), else next to the test binary (`swift build` builds both).
func carbridgeExecutable() throws -> URL {
    if let override = ProcessInfo.processInfo.environment["CARBRIDGE_BIN"], !override.isEmpty {
        return URL(fileURLWithPath: override)
    }
    let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0])
    var dir = testBinary
    for _ in 0..<3 {
        dir = dir.deletingLastPathComponent()
        let candidate = dir.appendingPathComponent("carbridge")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw MissingExecutable(searchedFrom: testBinary.path)
}

/// The carbridge binary was not built next to the tests.
struct MissingExecutable: Error, CustomStringConvertible {
    let searchedFrom: String
    var description: String { "carbridge executable not found near \(searchedFrom); run `swift build` first" }
}

/// A received line with its CLOCK_MONOTONIC arrival time.
struct ReceivedLine: Equatable {
    let time: Double
    let text: String
    /// Which accepted connection it came on (1 for the first).
    var connection = 1
}

/// A loopback TCP port that nothing listens on right now (bound once, then released).
func unusedLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}

/// A TCP "car" on 127.0.0.1: accepts connections (one at a time) and records every line with its
/// arrival time and connection number. `dropClient()` closes the current connection and keeps listening.
final class CarListener: @unchecked Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let lock = NSLock()
    private var lines: [ReceivedLine] = []
    private var connections = 0
    private var acceptTimes: [Double] = []
    private var closeTimes: [Double] = []
    private var closedConnections = 0
    private var thread: Thread?
    private var running = true
    private var clientFD: Int32 = -1

    /// Listens on `host:port` (0 = any free port), inside network namespace `namespace` when given
    /// (a socket belongs to the namespace of the thread that creates it).
    init(port requestedPort: UInt16 = 0, host: String = "127.0.0.1", namespace: String? = nil) throws {
        let fd = try namespace.map { try socketInNamespace($0) } ?? socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = requestedPort.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [weak self] in self?.serve() }
        self.thread = thread
        thread.start()
    }

    deinit {
        close(listenFD)
    }

    /// Sends `text` `count` times to the connected carbridge without ever blocking (what the socket
    /// does not take now is skipped); returns how many copies were sent.
    @discardableResult
    func flood(_ text: String, count: Int) -> Int {
        lock.lock(); let fd = clientFD; lock.unlock()
        guard fd >= 0 else { return 0 }
        let bytes = Array(text.utf8)
        var sent = 0
        for _ in 0..<count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if n != bytes.count { break }
            sent += 1
        }
        return sent
    }

    func stop() {
        lock.lock()
        running = false
        if clientFD >= 0 { shutdown(clientFD, Int32(SHUT_RDWR)) }
        lock.unlock()
    }

    /// Closes the current connection (as a car that resets or walks out of range would) and keeps
    /// listening, so the next connect is accepted. Returns false when no client was connected.
    @discardableResult
    func dropClient() -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard clientFD >= 0 else { return false }
        shutdown(clientFD, Int32(SHUT_RDWR))
        return true
    }

    /// Accepts connections and reads every open one: a car whose old connection is silently dead
    /// (a radio fade ate the reset) still accepts the next one, as a real car's stack would.
    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var clients: [(fd: Int32, connection: Int, partial: [UInt8])] = []
        while isRunning {
            var pfds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
                + clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if poll(&pfds, nfds_t(pfds.count), 100) <= 0 { continue }
            if pfds[0].revents != 0 {
                let fd = accept(listenFD, nil, nil)
                if fd >= 0 {
                    lock.lock(); connections += 1; acceptTimes.append(monotonicSeconds()); clientFD = fd
                    clients.append((fd, connections, []))
                    lock.unlock()
                }
            }
            var closed: [Int32] = []
            for (index, pfd) in pfds.enumerated().dropFirst() where pfd.revents != 0 {
                let client = clients[index - 1]
                let n = read(client.fd, &buffer, buffer.count)
                if n <= 0 {
                    closed.append(client.fd)
                    continue
                }
                let now = monotonicSeconds()
                var partial = client.partial + buffer[0..<n]
                while let newline = partial.firstIndex(of: 10) {
                    let text = String(decoding: partial[..<newline], as: UTF8.self)
                    partial.removeSubrange(...newline)
                    lock.lock(); lines.append(ReceivedLine(time: now, text: text, connection: client.connection)); lock.unlock()
                }
                clients[index - 1].partial = partial
            }
            for fd in closed {
                clients.removeAll { $0.fd == fd }
                lock.lock(); closedConnections += 1; closeTimes.append(monotonicSeconds())
                if clientFD == fd { clientFD = -1 }
                lock.unlock()
                close(fd)
            }
        }
        for client in clients { close(client.fd) }
    }

    private var isRunning: Bool {
        lock.lock(); defer { lock.unlock() }
        return running
    }

    var received: [ReceivedLine] {
        lock.lock(); defer { lock.unlock() }
        return lines
    }

    var connectionCount: Int {
        lock.lock(); defer { lock.unlock() }
        return connections
    }

    /// When each connection was accepted (CLOCK_MONOTONIC seconds).
    var acceptedAt: [Double] {
        lock.lock(); defer { lock.unlock() }
        return acceptTimes
    }

    /// When each connection was closed on the car's side.
    var closedAt: [Double] {
        lock.lock(); defer { lock.unlock() }
        return closeTimes
    }

    /// Every connection's first line, in order: the safety handshake (protocol §6).
    var handshakes: [String] {
        let lines = received
        var seen = Set<Int>()
        return lines.filter { seen.insert($0.connection).inserted }.map(\.text)
    }

    /// The lines received after each connection's handshake: what the driver's actions sent.
    var driven: [ReceivedLine] {
        let lines = received
        var seen = Set<Int>()
        return lines.filter { !seen.insert($0.connection).inserted }
    }

    /// The lines received on connection `number` (1-based).
    func received(onConnection number: Int) -> [ReceivedLine] {
        received.filter { $0.connection == number }
    }

    var closedCount: Int {
        lock.lock(); defer { lock.unlock() }
        return closedConnections
    }

    /// Waits (bounded) until `condition` holds.
    @discardableResult
    func wait(timeout: Double = 10, _ condition: (CarListener) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(self) }
    }

    /// Waits (bounded) until the frames after the handshakes, repeats collapsed, number at least
    /// `count` (then compare them with what was expected: a wrong frame shows there, not as a timeout).
    @discardableResult
    func waitForDrivenRuns(_ count: Int, timeout: Double = 10) -> Bool {
        wait(timeout: timeout) { distinctRuns($0.driven).count >= count }
    }

    /// Waits (bounded) until the last `count` lines received are all `text`: the car is being
    /// streamed `text`.
    @discardableResult
    func waitForStream(_ text: String, count: Int, timeout: Double = 10) -> Bool {
        wait(timeout: timeout) { car in
            let lines = car.received
            return lines.count >= count && lines.suffix(count).allSatisfy { $0.text == text }
        }
    }
}

/// A pseudo-terminal: the test holds the master, the child gets the slave as its terminal.
final class PseudoTerminal: @unchecked Sendable {
    let master: Int32
    let slave: Int32
    private let lock = NSLock()
    private var output: [UInt8] = []
    private var running = true
    private var masterClosed = false
    /// Signalled when the drain thread has left its loop (it never touches `master` afterwards).
    private let drainFinished = DispatchSemaphore(value: 0)

    /// Listens on `port` (0 = any free port).
    init(port requestedPort: UInt16 = 0) throws {
        var masterFD: Int32 = -1
        var slaveFD: Int32 = -1
        guard openpty(&masterFD, &slaveFD, nil, nil, nil) == 0 else { throw POSIXError(.ENXIO) }
        master = masterFD
        slave = slaveFD
        var size = winsize(ws_row: 30, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        _ = cb_ioctl_ptr(slave, UInt(TIOCSWINSZ), &size)
        Thread { [weak self] in self?.drain() }.start()
    }

    /// Non-canonical input without echo: the child (carbridge) has put the terminal into its key mode.
    var isRaw: Bool {
        var mode = termios()
        guard tcgetattr(slave, &mode) == 0 else { return false }
        return mode.c_lflag & tcflag_t(ICANON) == 0 && mode.c_lflag & tcflag_t(ECHO) == 0
    }

    /// Everything the child wrote to its terminal so far.
    var text: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: output, as: UTF8.self)
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Hangs the terminal up: closes the master, so the child's reads fail (EIO) as when a terminal
    /// window closes or an ssh session drops.
    func closeMaster() {
        lock.lock()
        let alreadyClosed = masterClosed
        running = false
        masterClosed = true
        lock.unlock()
        if alreadyClosed { return }
        // The drain thread leaves its 100 ms poll before the fd goes away (a later test could get
        // the same fd number for one of its sockets, and the drain thread would read from it).
        _ = drainFinished.wait(timeout: .now() + 10)
        close(master)
    }

    func closeAll() {
        lock.lock(); running = false; lock.unlock()
        close(slave)
    }

    private func drain() {
        defer { drainFinished.signal() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            lock.lock(); let keepGoing = running; lock.unlock()
            if !keepGoing { break }
            var pfd = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 100) <= 0 { continue }
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { break }
            lock.lock(); output += buffer[0..<n]; lock.unlock()
        }
    }
}

/// Runs carbridge with `arguments`, its stdin/stdout on `terminal` (or /dev/null), stderr captured.
final class CarbridgeProcess: @unchecked Sendable {
    let process = Process()
    let stderrPipe = Pipe()
    private var stderrData = Data()
    private var stderrEnded = false
    private let stallsStderr: Bool
    private let lock = NSLock()

    /// `stdout` replaces the terminal (or /dev/null) as standard output; `stallStderr` makes stderr
    /// a pipe nobody reads (its buffer fills up, as under a stuck journal); `launcher` runs
    /// carbridge through another program (`["unshare", "-m", …]`; carbridge's path is appended to it).
    /// `environment` is added to the test's own, from which systemd's variables (`NOTIFY_SOCKET`,
    /// `WATCHDOG_USEC`, `WATCHDOG_PID`, `JOURNAL_STREAM`) are always removed first; `journalStderr`
    /// sets `JOURNAL_STREAM` to the stderr pipe's device:inode, as systemd does for a service whose
    /// stderr is the journal.
    init(
        arguments: [String], terminal: PseudoTerminal?, stdout: FileHandle? = nil, stallStderr: Bool = false,
        launcher: [String] = [], environment: [String: String] = [:], journalStderr: Bool = false
    ) throws {
        let executable = try carbridgeExecutable()
        if launcher.isEmpty {
            process.executableURL = executable
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launcher[0])
            process.arguments = Array(launcher.dropFirst()) + [executable.path] + arguments
        }
        if let terminal {
            process.standardInput = FileHandle(fileDescriptor: terminal.slave, closeOnDealloc: false)
            process.standardOutput = FileHandle(fileDescriptor: terminal.slave, closeOnDealloc: false)
        } else {
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
        }
        if let stdout { process.standardOutput = stdout }
        process.standardError = stderrPipe
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"] { env[key] = nil }
        env.merge(environment) { $1 }
        if journalStderr {
            var info = stat()
            fstat(stderrPipe.fileHandleForWriting.fileDescriptor, &info)
            env["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
        }
        process.environment = env
        stallsStderr = stallStderr
        if !stallStderr {
            stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil }  // end of file: every writer is gone
                guard let self else { return }
                self.lock.lock(); self.stderrData.append(data); if data.isEmpty { self.stderrEnded = true }; self.lock.unlock()
            }
        }
        try process.run()
    }

    /// With `stallStderr`: reads what is in the stderr pipe now (without waiting).
    func readStalledStderr() -> String {
        let fd = stderrPipe.fileHandleForReading.fileDescriptor
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 0) != 1 { break }
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// With `stallStderr`: how many bytes wait in the stderr pipe (FIONREAD).
    var stderrPipeFill: Int {
        var count: Int32 = 0
        return cb_ioctl_ptr(stderrPipe.fileHandleForReading.fileDescriptor, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    var stderr: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: stderrData, as: UTF8.self)
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Sends SIGTERM and waits (bounded) for the exit: the status (nil after a kill on timeout)
    /// and how many seconds after the signal the process was seen gone (not counting the wait for the end
    /// of its stderr that follows: once, on a loaded machine, that EOF came 5 s after a 1 s exit).
    func terminate(timeout: Double = 10) -> (status: Int32?, seconds: Double) {
        let signalled = monotonicSeconds()
        signal(SIGTERM)
        waitUntil(timeout: timeout) { !process.isRunning }
        let exited = monotonicSeconds()
        let status = waitForExit(timeout: 0)
        return (status, exited - signalled)
    }

    /// Waits (bounded) for exit, and for the end of its stderr (the pipe's last bytes may still be on
    /// their way to the reading handler when the process is gone); returns the exit status, or nil
    /// after killing it on timeout.
    func waitForExit(timeout: Double = 10) -> Int32? {
        waitUntil(timeout: timeout) { !process.isRunning }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        if !stallsStderr {
            waitUntil(timeout: 5) { lock.withLock { stderrEnded } }
        }
        return process.terminationStatus
    }
}

/// Collapses consecutive repeats (stream frames) into one entry each.
func distinctRuns(_ lines: [ReceivedLine]) -> [String] {
    var result: [String] = []
    for line in lines where result.last != line.text { result.append(line.text) }
    return result
}

/// The intervals, in milliseconds, between consecutive identical frames (the stream).
func streamIntervals(_ lines: [ReceivedLine]) -> [Double] {
    guard lines.count > 1 else { return [] }
    var intervals: [Double] = []
    for index in 1..<lines.count where lines[index].text == lines[index - 1].text {
        intervals.append((lines[index].time - lines[index - 1].time) * 1000)
    }
    return intervals
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

/// Starts `carbridge run --link tcp://127.0.0.1:PORT --log-level debug EXTRA…` on a pty against a
/// fresh listening car and waits (bounded) until the bridge has seen the link up: the car got the
/// handshake, which the bridge sends when the link comes up (the keyboard is read from before the
/// link starts: the terminal is raw by then).
func startDriving(
    _ extra: [String] = [], stallStderr: Bool = false, file: StaticString = #filePath, line: UInt = #line
) throws
    -> (car: CarListener, terminal: PseudoTerminal, process: CarbridgeProcess)
{
    let car = try CarListener()
    let terminal = try PseudoTerminal()
    let process = try CarbridgeProcess(
        arguments: ["run", "--link", "tcp://127.0.0.1:\(car.port)", "--log-level", "debug"] + extra,
        terminal: terminal, stallStderr: stallStderr)
    XCTAssertTrue(car.wait { $0.connectionCount == 1 && !$0.handshakes.isEmpty },
                  "carbridge never connected:\n\(process.stderr)", file: file, line: line)
    XCTAssertTrue(terminal.isRaw, "the terminal is not in key mode after the link came up", file: file, line: line)
    return (car, terminal, process)
}

/// Types `keys` into the terminal and gives carbridge `pause` microseconds to act on them.
/// Only RadioFadeTests and DelayedAckTests still call it; every other test types its keys and waits
/// for what they do (the car's frames), which a fixed pause only hopes for.
func press(_ terminal: PseudoTerminal, _ keys: String, pause: useconds_t = 150_000) {
    terminal.type(keys)
    usleep(pause)
}
