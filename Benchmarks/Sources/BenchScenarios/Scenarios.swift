import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import Glibc

/// One benchmark: `setUp` builds everything once (and warms up to steady state), `run` does one
/// operation; `unitsPerOperation` says how many of the reported unit (input event, tick, line, load)
/// one operation is.
public struct Scenario {
    public let name: String
    public let unit: String
    public let unitsPerOperation: Int
    public let makeRunner: () -> () -> Void
}

/// The pipeline a gamepad or accelerometer report goes through in `carbridge run`, minus the event
/// loop: kernel `input_event` bytes → `InputEventDecoder` → `EvdevFrameAssembler` → `ControlMapper` →
/// `DriveMachine` → `FrameQueue` (`FrameEncoder`) → `write(2)` into one end of a socketpair, whose
/// other end is drained right away (what `StreamLink` does with a writable, empty socket).
public final class Pipeline {
    public var decoder = InputEventDecoder()
    public var assembler: EvdevFrameAssembler
    public var mapper: ControlMapper
    public var machine: DriveMachine
    public var queue = FrameQueue(encoder: FrameEncoder())
    public var now = Instant.seconds(1)
    public let role: DeviceRole
    public private(set) var framesWritten = 0
    public private(set) var bytesWritten = 0
    let writeEnd: Int32
    let readEnd: Int32
    var drainBuffer = [UInt8](repeating: 0, count: 4096)

    public init(config: CarbridgeConfig, absInfo: [UInt16: AbsInfo], isAccelerometer: Bool, role: DeviceRole) {
        assembler = EvdevFrameAssembler(absInfo: absInfo, isAccelerometer: isAccelerometer)
        mapper = ControlMapper(settings: config.mapperSettings)
        machine = DriveMachine(settings: config.drive)
        self.role = role
        var fds: [Int32] = [0, 0]
        let rc = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        precondition(rc == 0, "socketpair failed")
        writeEnd = fds[0]
        readEnd = fds[1]
        // Link up, engine on, S = 40 forward: the car is driving.
        for control in [Control.linkUp, .engine, .speedUp, .speedUp, .speedUp, .speedUp] { apply(control) }
    }

    deinit {
        close(writeEnd)
        close(readEnd)
    }

    /// Advances the clock (input events carry their own time; the pipeline's "now" stands for the loop's).
    public func advance(milliseconds: Int64) { now = now + .milliseconds(milliseconds) }

    /// Kernel bytes in, frames out.
    public func feed(_ bytes: UnsafeRawBufferPointer) {
        for event in decoder.decode(bytes) {
            if let frame = assembler.feed(event, at: now) { handle(frame) }
        }
    }

    /// A complete input frame in (the tilt path starts here).
    public func handle(_ frame: InputFrame) {
        for mapped in mapper.handle(frame, role: role) {
            if case .control(let control) = mapped { apply(control) }
        }
    }

    public func apply(_ control: Control) { write(machine.handle(control, at: now)) }

    /// The stream timer firing.
    public func tick() { write(machine.tick(at: now)) }

    func write(_ frames: [Frame]) {
        for frame in frames { queue.push(frame) }
        while queue.hasPendingBytes {
            let bytes = queue.nextBytes()
            let written = bytes.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
            precondition(written > 0, "write failed")
            framesWritten += queue.consume(written)
            bytesWritten += written
            let drained = drainBuffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            precondition(drained == written, "drain failed")
        }
    }
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

/// A gamepad scenario: each operation feeds the next of `reports` (cycling), 1 ms apart.
func gamepadRunner(_ reports: [[UInt8]], expectFramesPerCycle expected: Int) -> () -> Void {
    let pipeline = Pipeline(config: defaultConfig(), absInfo: stickAbsInfo, isAccelerometer: false, role: .gamepad)
    var index = 0
    let step = {
        pipeline.advance(milliseconds: 1)
        reports[index].withUnsafeBytes { pipeline.feed($0) }
        index = (index + 1) % reports.count
    }
    // Warm-up: every report several times (caches, array capacities, the first steer).
    for _ in 0..<(reports.count * 64) { step() }
    // Check the scenario does what it says: `expected` frames written per cycle through `reports`.
    let before = pipeline.framesWritten
    for _ in 0..<reports.count { step() }
    let got = pipeline.framesWritten - before
    precondition(got == expected, "expected \(expected) frame(s) per cycle of \(reports.count) reports, got \(got)")
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
        // An accelerometer frame (gravity rolling back and forth across the 15° boundary) → tilt mapper → machine.
        var config = defaultConfig()
        config.steering.source = .tilt
        let pipeline = Pipeline(config: config, absInfo: [:], isAccelerometer: true, role: .accelerometer)
        var index = 0
        let frames: [InputFrame] = (0..<64).map { i in
            let degrees = Double(i < 32 ? i : 64 - i) * 1.0  // 0…32…1 degrees
            let radians = degrees * Double.pi / 180
            return InputFrame(time: .zero, acceleration: Vector3(x: 9.81 * sin(radians), y: 0, z: 9.81 * cos(radians)))
        }
        let step = {
            pipeline.advance(milliseconds: 20)
            var frame = frames[index]
            frame.time = pipeline.now
            pipeline.handle(frame)
            index = (index + 1) % frames.count
        }
        for _ in 0..<(frames.count * 16) { step() }
        return step
    },
    Scenario(name: "stream-tick", unit: "tick", unitsPerOperation: 1) {
        // S = 40: the stream timer every 50 ms, one motion frame each.
        let pipeline = Pipeline(config: defaultConfig(), absInfo: stickAbsInfo, isAccelerometer: false, role: .gamepad)
        let step = {
            pipeline.now = pipeline.machine.streamDeadline ?? (pipeline.now + .milliseconds(50))
            pipeline.tick()
        }
        for _ in 0..<64 { step() }
        let before = pipeline.framesWritten
        for _ in 0..<10 { step() }
        precondition(pipeline.framesWritten - before == 10, "expected one frame per tick")
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
