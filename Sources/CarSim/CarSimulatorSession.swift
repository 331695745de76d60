import DriveCore
import DriveLink
import DriveSystem
import Glibc

/// The car's side of one connection: parses every line strictly (`CarFrameParser`, `CarModel`),
/// reports frames, violations and what the car does, and talks back: `OK …` on start, `CAR <action>`
/// when what the car does changes, `ERR <reason>` for a bad line, `BAT=<volts>` every `statusInterval`
/// (a status line, docs/protocol.md §7), and
/// `CAR failsafe stop` when its failsafe stops it (`CarFailsafe`, docs/protocol.md §8).
package final class CarSimulatorSession {
    /// Tunables of a simulated car.
    package struct Options: Hashable, Sendable {
        /// How often `BAT=<volts>` is sent; nil = never.
        package var statusInterval: Duration?
        /// Accept speed jumps larger than 10 (analog throttle).
        package var allowSpeedJumps: Bool
        /// Send `CAR <action>` lines back when the action changes.
        package var reportsActions: Bool
        /// The battery's voltage when the session starts (a 2S pack: 8.4 full, 6.4 empty).
        package var batteryVolts: Double
        /// The failsafe: moving without a valid frame this long stops the car; nil = none.
        package var failsafe: Duration?

        /// Creates options; defaults: status every 2 s like the reference firmware, strict speed steps,
        /// actions reported, 8.00 V, the failsafe at 300 ms like the reference firmware.
        package init(
            statusInterval: Duration? = .seconds(2), allowSpeedJumps: Bool = false, reportsActions: Bool = true,
            batteryVolts: Double = 8, failsafe: Duration? = .milliseconds(300)
        ) {
            self.statusInterval = statusInterval
            self.allowSpeedJumps = allowSpeedJumps
            self.reportsActions = reportsActions
            self.batteryVolts = batteryVolts
            self.failsafe = failsafe
        }
    }

    /// Where the session's bytes come from, e.g. `tcp 127.0.0.1:40112` or `pty /dev/pts/4`.
    package let name: String
    /// Called for every valid frame, with the time it was read.
    package var onFrame: ((Frame, Instant) -> Void)?
    /// Called for every broken rule: the reason and the line.
    package var onViolation: ((String, String) -> Void)?
    /// Called for connection events and changes of what the car does.
    package var onEvent: ((String) -> Void)?
    /// Called once when the session ends (the peer closed or `close()`).
    package var onClose: (() -> Void)?
    /// What the car knows.
    package private(set) var model: CarModel
    /// The battery's voltage in hundredths of a volt: 0.01 V less for each status line sent while the
    /// motors run (they draw the current), never below 0.
    package private(set) var batteryCentivolts: Int
    /// What the car currently does, e.g. "forward at 40".
    package private(set) var action = "stopped (forward, straight)"
    /// Lines that were not valid frames or broke a rule.
    package private(set) var violationCount = 0
    /// The failsafe's state: whether the motors run, and how often it stopped them.
    package private(set) var failsafe: CarFailsafe
    /// True while the motors run.
    package var isMoving: Bool { failsafe.isMoving }
    /// True until the session ends.
    package var isOpen: Bool { fd >= 0 }

    private let loop: EventLoop
    private let options: Options
    private var fd: Int32
    private let closesFD: Bool
    private var assembler = LineAssembler()
    private var output: [UInt8] = []
    private var statusTimer: EventLoop.TimerID?
    private var failsafeTimer: EventLoop.TimerID?
    private static let outputLimit = 64 * 1024

    /// Serves the car side of `fd` (non-blocking); `closesFD` says whether the session owns it.
    package init(fd: Int32, name: String, loop: EventLoop, options: Options = Options(), closesFD: Bool = true) {
        self.fd = fd
        self.name = name
        self.loop = loop
        self.options = options
        self.closesFD = closesFD
        self.model = CarModel(allowSpeedJumps: options.allowSpeedJumps)
        self.batteryCentivolts = max(0, Int((options.batteryVolts * 100).rounded()))
        self.failsafe = CarFailsafe(timeout: options.failsafe)
    }

    deinit {
        if let statusTimer { loop.cancel(statusTimer) }
        if let failsafeTimer { loop.cancel(failsafeTimer) }
        if fd >= 0 {
            loop.unwatch(fd)
            if closesFD { Syscall.close(fd) }
        }
    }

    /// Starts reading, says hello and schedules status lines.
    package func start() throws {
        try loop.watch(fd, for: .readable) { [weak self] events in self?.handle(events) }
        write("OK carbridge car simulator ready")
        scheduleStatus()
    }

    /// Ends the session (closing the fd if the session owns it).
    package func close() {
        guard fd >= 0 else { return }
        if let statusTimer { loop.cancel(statusTimer) }
        statusTimer = nil
        if let failsafeTimer { loop.cancel(failsafeTimer) }
        failsafeTimer = nil
        loop.unwatch(fd)
        if closesFD { Syscall.close(fd) }
        fd = -1
        onClose?()
    }

    /// Handles one line as if it had just been read (the parsing and rules, without I/O).
    package func receive(line: String, at time: Instant) {
        switch CarFrameParser.parse(line) {
        case .failure(let error):
            violation(error.reason, line: line)
        case .success(let frame):
            for broken in model.receive(frame) { violation(broken, line: line) }
            failsafe.receive(frame, at: time)
            armFailsafe()
            onFrame?(frame, time)
            let now = CarModel.describe(frame)
            let isAction = frame.isMotion || frame.kind == .engineOff
            if !isAction || now != action {
                if isAction { action = now }
                onEvent?("car: \(now)")
                if options.reportsActions { write("CAR \(now)") }
            }
        }
    }

    /// Arms the failsafe's timer for its current deadline (none while stopped).
    private func armFailsafe() {
        if let failsafeTimer { loop.cancel(failsafeTimer) }
        failsafeTimer = nil
        guard let deadline = failsafe.deadline else { return }
        failsafeTimer = loop.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            self.failsafeTimer = nil
            guard self.failsafe.check(at: self.loop.now()) else { return self.armFailsafe() }
            let timeout = self.options.failsafe.map { Int($0.milliseconds.rounded()) } ?? 0
            self.action = "stopped (failsafe: no frame for \(timeout) ms)"
            self.onEvent?("car: \(self.action)")
            if self.options.reportsActions { self.write("CAR failsafe stop") }
        }
    }

    private func violation(_ reason: String, line: String) {
        violationCount += 1
        onViolation?(reason, line)
        write("ERR \(reason)")
    }

    private func scheduleStatus() {
        guard let interval = options.statusInterval, interval > .zero else { return }
        statusTimer = loop.schedule(after: interval) { [weak self] in
            guard let self, self.fd >= 0 else { return }
            if self.isMoving { self.batteryCentivolts = max(0, self.batteryCentivolts - 1) }
            self.write(self.statusLine)
            self.scheduleStatus()
        }
    }

    /// `BAT=7.42`: the battery in volts with two decimals.
    package var statusLine: String {
        let hundredths = batteryCentivolts % 100
        return "BAT=\(batteryCentivolts / 100).\(hundredths < 10 ? "0" : "")\(hundredths)"
    }

    private func handle(_ events: IOEvents) {
        if events.contains(.writable) { flushOutput() }
        guard fd >= 0, !events.intersection([.readable, .hangup, .error, .readHangup]).isEmpty else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let descriptor = fd
            let result: Int?
            do {
                result = try buffer.withUnsafeMutableBytes { try Syscall.read(descriptor, into: $0) }
            } catch let error as SystemError {
                onEvent?("\(name): read failed (\(SocketSupport.reason(error.errno))), closing")
                close()
                return
            } catch {
                close()
                return
            }
            guard let count = result else { return }
            if count == 0 {
                if let rest = assembler.finish() { receive(line: rest, at: loop.now()) }
                onEvent?("\(name): the bridge closed the connection")
                close()
                return
            }
            let time = loop.now()
            for line in assembler.append(buffer[..<count]) {
                receive(line: line, at: time)
                if fd < 0 { return }
            }
            if count < buffer.count { return }
        }
    }

    private func write(_ line: String) {
        guard fd >= 0 else { return }
        if output.count + line.utf8.count + 1 > Self.outputLimit { return }  // the bridge is not reading: drop
        output.append(contentsOf: line.utf8)
        output.append(0x0A)
        flushOutput()
    }

    private func flushOutput() {
        guard fd >= 0 else { return }
        while !output.isEmpty {
            let result: Int?
            do {
                result = try output.withUnsafeBytes { raw in
                    try Syscall.nonBlocking("send") {
                        Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                    }
                }
            } catch let error as SystemError where error.errno == ENOTSOCK {
                do {
                    result = try output.withUnsafeBytes { try Syscall.write(fd, $0) }
                } catch {
                    output.removeAll()
                    return
                }
            } catch {
                output.removeAll()  // the peer is gone; reading will notice and close
                return
            }
            guard let count = result, count > 0 else { break }
            output.removeFirst(count)
        }
        try? loop.change(fd, to: output.isEmpty ? .readable : [.readable, .writable])
    }
}
