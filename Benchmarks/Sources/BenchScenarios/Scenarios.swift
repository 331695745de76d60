import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveLink
import DriveMapping
import DriveRuntime
import DriveSystem
import Glibc
import Logging

/// One benchmark: `setUp` builds everything once (and warms up to steady state), `run` does one
/// operation; `unitsPerOperation` says how many of the reported unit (input event, tick, line, load)
/// one operation is.
public struct Scenario {
    public let name: String
    public let unit: String
    public let unitsPerOperation: Int
    public let makeRunner: () -> () -> Void
}

/// What `carbridge run` executes for an input device and a link, wired as `RunSession` wires it, on a
/// manual-clock `EventLoop` (time moves only when the scenario says; real fds are polled as usual):
/// `input_event` bytes written into a pipe → `RawEvdevReader` (`InputEventDecoder`,
/// `EvdevFrameAssembler`) → `InputCoordinator` (`InputDeviceManager`, `InputMapping`: `ControlMapper`) →
/// `Bridge` (`DriveMachine`, `DeadlineTimer`) → `RunEvents` (the `RunViewModel`, the `FeedbackService`, the
/// inputs' mapping) → `StreamLink` (`FrameQueue`/`FrameEncoder`, the kernel-queue rule) → `write(2)` into a
/// socketpair, whose far end (the car) is drained after each step.
public final class Runtime {
    public let loop: EventLoop
    public let link: StreamLink<PairConnector>
    public let bridge: Bridge
    public let model: RunViewModel
    public let feedback: FeedbackService
    public let inputs: InputCoordinator
    let connector: PairConnector
    let reader: RawEvdevReader
    let inputWriteEnd: Int32
    var drainBuffer = [UInt8](repeating: 0, count: 4096)
    public private(set) var bytesReceived = 0

    public init(
        config: CarbridgeConfig, absInfo: [UInt16: AbsInfo], isAccelerometer: Bool, role: DeviceRole,
        startControls: [Control]
    ) throws {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        loop = try EventLoop(clock: .manual)
        connector = PairConnector()
        link = StreamLink(
            connector: connector, loop: loop, encoder: FrameEncoder(terminator: config.link.terminator),
            options: config.link.options)
        bridge = Bridge(settings: config.drive, link: link, loop: loop, logger: logger)
        model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        feedback = FeedbackService(config: config, loop: loop, events: bridge.events, logger: logger)
        bridge.events.subscribe(feedback)
        inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        bridge.events.subscribe(inputs)
        let bridge = self.bridge
        inputs.onControl = { control in bridge.apply(control) }  // as InputService wires it (the deinit breaks the cycle)
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe failed")
        inputWriteEnd = fds[1]
        reader = try RawEvdevReader(fd: fds[0], loop: loop, absInfo: absInfo, isAccelerometer: isAccelerometer)
        try inputs.attach(reader, role: role, name: "bench device")
        bridge.start()  // a socketpair connects at once: link up, the handshake frame
        precondition(link.state == .up, "the link did not come up")
        for control in startControls { bridge.apply(control) }
        drainCar()
    }

    deinit {
        inputs.stop()
        feedback.stop()
        bridge.events.removeAll()
        close(inputWriteEnd)
        if connector.peer >= 0 { close(connector.peer) }
    }

    /// Kernel bytes in: written into the device's pipe, then the loop handles what is ready at the
    /// current instant (the clock stands still), then the car reads what was sent.
    public func feed(_ bytes: [UInt8]) {
        let written = bytes.withUnsafeBytes { write(inputWriteEnd, $0.baseAddress, $0.count) }
        precondition(written == bytes.count, "pipe write failed")
        do { try loop.runOnce(timeout: .zero) } catch { fatalError("\(error)") }
        drainCar()
    }

    /// Moves the clock on by `duration`, running every timer on the way (the stream period), and
    /// whatever is ready; then the car reads.
    public func advance(by duration: Duration) {
        do { try loop.advance(by: duration) } catch { fatalError("\(error)") }
        drainCar()
    }

    /// Kernel bytes in, with the clock moved on by `duration` first.
    public func feed(_ bytes: [UInt8], after duration: Duration) {
        let written = bytes.withUnsafeBytes { write(inputWriteEnd, $0.baseAddress, $0.count) }
        precondition(written == bytes.count, "pipe write failed")
        advance(by: duration)
    }

    func drainCar() {
        while true {
            let count = drainBuffer.withUnsafeMutableBytes { read(connector.peer, $0.baseAddress, $0.count) }
            if count <= 0 { return }
            bytesReceived += count
        }
    }
}

/// The car's end of the link: a socketpair (non-blocking), the far end kept in `peer`.
public final class PairConnector: StreamConnector {
    public let name = "bench-pair"
    public var peer: Int32 = -1

    public func open() throws -> (fd: Int32, progress: ConnectProgress) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, SocketSupport.streamSocketType, 0, &fds) == 0 else {
            throw LinkFailure("socketpair failed")
        }
        if peer >= 0 { close(peer) }
        peer = fds[1]
        return (fds[0], .connected)
    }

    public func finishConnect(_ fd: Int32) throws {}
    public func lossSentence(_ error: SystemError) -> String { "pair lost: \(error.errno)" }
    /// An AF_UNIX socket's `SIOCOUTQ` counts buffer memory, not payload.
    public var queuedBytesArePayload: Bool { false }
}

/// `input_event` bytes of a report: the events then `SYN_REPORT`.
func report(_ events: [(UInt16, UInt16, Int32)]) -> [UInt8] {
    InputEventDecoder.encode(
        events.map { InputEvent(type: $0.0, code: $0.1, value: $0.2) }
            + [InputEvent(type: EvdevCode.evSyn, code: EvdevCode.synReport, value: 0)])
}

func defaultConfig() -> CarbridgeConfig {
    do { return try CarbridgeConfig.defaults(resolver: EventCodeNames()) } catch { fatalError("\(error)") }
}

let stickAbsInfo: [UInt16: AbsInfo] = [
    EvdevCode.absX: AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
    EvdevCode.absY: AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
]

/// Engine on, S = 40 forward: the car is driving.
let driving: [Control] = [.engine, .speedUp, .speedUp, .speedUp, .speedUp]

func makeRuntime(
    _ config: CarbridgeConfig = defaultConfig(), absInfo: [UInt16: AbsInfo] = stickAbsInfo, isAccelerometer: Bool = false,
    role: DeviceRole = .gamepad, startControls: [Control] = driving
) -> Runtime {
    do {
        return try Runtime(
            config: config, absInfo: absInfo, isAccelerometer: isAccelerometer, role: role, startControls: startControls)
    } catch {
        fatalError("\(error)")
    }
}

/// A gamepad scenario: each operation feeds the next of `reports` (cycling) at the same instant (the
/// stream timer never fires in between: the figure is the input event's alone).
func gamepadRunner(_ reports: [[UInt8]], expectFramesPerCycle expected: Int) -> () -> Void {
    let runtime = makeRuntime()
    var index = 0
    let step = {
        runtime.feed(reports[index])
        index = (index + 1) % reports.count
    }
    // Warm-up: every report several times (caches, array capacities, the first steer).
    for _ in 0..<(reports.count * 64) { step() }
    // Check the scenario does what it says: `expected` frames sent per cycle through `reports`.
    let before = runtime.bridge.framesSent
    let bytesBefore = runtime.bytesReceived
    for _ in 0..<reports.count { step() }
    let got = runtime.bridge.framesSent - before
    precondition(got == expected, "expected \(expected) frame(s) per cycle of \(reports.count) reports, got \(got)")
    precondition((runtime.bytesReceived - bytesBefore > 0) == (expected > 0), "the car did not get the frames")
    return step
}

/// Evemu text: the xbox360 fixture's header, then `eventLines` event lines (stick, buttons, SYN).
public func evemuText(eventLines: Int) -> String {
    var text = """
        # EVEMU 1.3
        # Input device name: "Microsoft X-Box 360 pad"
        # Input device ID: bus 0x03 vendor 0x45e product 0x28e version 0x114
        N: Microsoft X-Box 360 pad
        I: 0003 045e 028e 0114
        P: 00 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 ff 7c 00
        B: 03 3b 00 00 00 00 00 00 00
        A: 00 -32768 32767 16 128 0
        A: 01 -32768 32767 16 128 0
        A: 02 0 255 0 0 0
        A: 03 -32768 32767 16 128 0
        A: 04 -32768 32767 16 128 0
        A: 05 0 255 0 0 0
        ################################
        #      Waiting for events      #
        ################################

        """
    var seconds = 0
    var microseconds = 0
    for line in 0..<eventLines {
        microseconds += 4000
        if microseconds >= 1_000_000 { microseconds -= 1_000_000; seconds += 1 }
        let time = "\(seconds).\(String(repeating: "0", count: 6 - String(microseconds).count))\(microseconds)"
        switch line % 4 {
        case 0: text += "E: \(time) 0003 0000 \((line * 37) % 65536 - 32768)\t# EV_ABS / ABS_X\n"
        case 1: text += "E: \(time) 0003 0001 \((line * 91) % 65536 - 32768)\t# EV_ABS / ABS_Y\n"
        case 2: text += "E: \(time) 0001 0130 \(line / 4 % 2)\t# EV_KEY / BTN_SOUTH\n"
        default: text += "E: \(time) 0000 0000 0000\t# ------------ SYN_REPORT (0) ----------\n"
        }
    }
    return text
}

/// Walking the same text's Characters once (counting lines): the reference the evemu budget compares with.
@inline(never)
public func countLinesByCharacters(_ text: String) -> Int {
    var lines = 0
    for character in text where character == "\n" { lines += 1 }
    return lines
}

@inline(never)
func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

public let evemuLineCount = 4000
/// Lines of the evemu text (header and events).
public let evemuTotalLines = countLinesByCharacters(evemuText(eventLines: evemuLineCount))

public let scenarios: [Scenario] = [
    Scenario(name: "stick-range-change", unit: "input event", unitsPerOperation: 1) {
        // ABS_X alternating 0 (θ 0, range 0) and 20000 (θ ≈ 50°, range 1): a motion frame each time.
        gamepadRunner(
            [report([(EvdevCode.evAbs, EvdevCode.absX, 20000)]), report([(EvdevCode.evAbs, EvdevCode.absX, 0)])],
            expectFramesPerCycle: 2)
    },
    Scenario(name: "stick-same-range", unit: "input event", unitsPerOperation: 1) {
        // ABS_X alternating 5000 and 6000: θ moves (a .steer) but stays in range 0: no frame.
        gamepadRunner(
            [report([(EvdevCode.evAbs, EvdevCode.absX, 5000)]), report([(EvdevCode.evAbs, EvdevCode.absX, 6000)])],
            expectFramesPerCycle: 0)
    },
    Scenario(name: "button-press", unit: "input event", unitsPerOperation: 1) {
        // BTN_SOUTH (F1 in the default layout) pressed, then released: one F1 frame per press+release pair.
        gamepadRunner(
            [report([(EvdevCode.evKey, 0x130, 1)]), report([(EvdevCode.evKey, 0x130, 0)])],
            expectFramesPerCycle: 1)
    },
    Scenario(name: "tilt-sample", unit: "input event", unitsPerOperation: 1) {
        // An evdev accelerometer's report (ABS_X, ABS_Z, SYN_REPORT; gravity rolling 0°…32°…0° in 1° steps,
        // 20 ms apart) → tilt mapper → machine → a frame when the range changes (hence the fractional
        // count). Engine on at S = 0, so the 20 ms steps fire no stream frame.
        var config = defaultConfig()
        config.steering.source = .tilt
        let resolution: Int32 = 1000  // units per g
        let axis = AbsInfo(minimum: -4000, maximum: 4000, resolution: resolution)
        let runtime = makeRuntime(
            config, absInfo: [EvdevCode.absX: axis, EvdevCode.absY: axis, EvdevCode.absZ: axis], isAccelerometer: true,
            role: .accelerometer, startControls: [.engine])
        let reports: [[UInt8]] = (0..<64).map { i in
            let radians = Double(i < 32 ? i : 64 - i) * Double.pi / 180
            return report([
                (EvdevCode.evAbs, EvdevCode.absX, Int32((Double(resolution) * sin(radians)).rounded())),
                (EvdevCode.evAbs, EvdevCode.absZ, Int32((Double(resolution) * cos(radians)).rounded())),
            ])
        }
        var index = 0
        let step = {
            runtime.feed(reports[index], after: .milliseconds(20))
            index = (index + 1) % reports.count
        }
        for _ in 0..<(reports.count * 16) { step() }
        let before = runtime.bridge.framesSent
        for _ in 0..<reports.count { step() }
        precondition(runtime.bridge.framesSent > before, "the tilt never changed the range")
        return step
    },
    Scenario(name: "stream-tick", unit: "tick", unitsPerOperation: 1) {
        // S = 40: the clock moves on by one stream period (50 ms); the bridge's timer fires, one motion
        // frame goes to the car (and the link's queue check runs).
        let runtime = makeRuntime()
        let step = { runtime.advance(by: .milliseconds(50)) }
        for _ in 0..<64 { step() }
        let before = runtime.bridge.framesSent
        for _ in 0..<10 { step() }
        precondition(runtime.bridge.framesSent - before == 10, "expected one frame per tick")
        return step
    },
    Scenario(name: "evemu-parse", unit: "line", unitsPerOperation: evemuTotalLines) {
        let text = evemuText(eventLines: evemuLineCount)
        return {
            do { consume(try EvemuRecording.parse(text)) } catch { fatalError("\(error)") }
        }
    },
    Scenario(name: "evemu-walk-characters", unit: "line", unitsPerOperation: evemuTotalLines) {
        let text = evemuText(eventLines: evemuLineCount)
        return { consume(countLinesByCharacters(text)) }
    },
    Scenario(name: "config-load", unit: "load", unitsPerOperation: 1) {
        // config/carbridge.toml (every option with its default), from memory.
        let path = configPath()
        guard let file = fopen(path, "r") else { fatalError("cannot open \(path)") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        fclose(file)
        let text = String(decoding: bytes, as: UTF8.self)
        let resolver = EventCodeNames()
        return {
            do { consume(try CarbridgeConfig.load(text: text, file: "carbridge.toml", resolver: resolver)) } catch {
                fatalError("\(error)")
            }
        }
    },
]

/// config/carbridge.toml of the main package (CARBRIDGE_CONFIG overrides).
func configPath() -> String {
    if let path = getenv("CARBRIDGE_CONFIG") { return String(cString: path) }
    return "../config/carbridge.toml"
}
