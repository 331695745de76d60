// Evemu recordings (`monitor --replay`, `run --replay`): the real parser, then what a replay does with the
// result — due instants from EvemuPlayer, frames from EvdevFrameAssembler, controls from the mapper of the
// default config (stick, or tilt for accelerometer recordings), the monitor's text and the state machine.
import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveRuntime
import DriveTerminal
import DriveSystem
import FuzzSupport

private let loop = try! EventLoop()
private let defaults = try! CarbridgeConfig.defaults(resolver: EventCodeNames())
private let stickSettings = defaults.mapperSettings
private let tiltSettings: ControlMapper.Settings = {
    var config = defaults
    config.steering.source = .tilt
    return config.mapperSettings
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvemu(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let recording: EvemuRecording
    do {
        recording = try EvemuRecording.parse(text)
    } catch let error as EvemuError {
        fuzzCheck(error.line >= 1, "error line \(error.line)")
        _ = error.description
        return 0
    } catch {
        fuzzCheck(false, "not an EvemuError: \(error)")
        return 0
    }
    let events = recording.events
    fuzzCheck(events.count == recording.eventLines.count, "one line number per event")
    fuzzCheck(zip(recording.eventLines, recording.eventLines.dropFirst()).allSatisfy { $0 < $1 }, "event lines ascend")
    for event in events {
        fuzzCheck(event.seconds >= 0 && event.seconds <= EvemuRecording.maximumSeconds, "seconds \(event.seconds)")
        fuzzCheck((0...999_999).contains(event.microseconds), "microseconds \(event.microseconds)")
    }
    fuzzCheck(recording.durationMicroseconds >= 0, "duration \(recording.durationMicroseconds)")

    // Due instants: never before the start, never going back.
    let start = Instant(nanoseconds: 1_000_000_000_000)
    let player = EvemuPlayer(recording: recording, loop: loop)
    player.start(at: start)
    var due: [Instant] = []
    for index in 0..<min(events.count, 128) {
        guard let instant = player.dueInstant(ofEvent: index) else {
            fuzzCheck(false, "no due instant for event \(index)")
            return 0
        }
        fuzzCheck(instant >= start && instant >= (due.last ?? start), "due instant \(index) goes back: \(instant)")
        due.append(instant)
    }
    player.stop()

    // The replay's path: frames → mapper → controls → monitor text and state machine.
    let isAccelerometer = recording.info.isAccelerometer
    let role: DeviceRole = isAccelerometer ? .accelerometer : .gamepad
    var assembler = EvdevFrameAssembler(absInfo: recording.info.axes, isAccelerometer: isAccelerometer)
    var mapper = ControlMapper(settings: isAccelerometer ? tiltSettings : stickSettings)
    var formatter = MonitorFormatter(hysteresisDegrees: 2, resolver: EventCodeNames())
    var machine = DriveMachine()
    var time = start
    for (index, event) in events.prefix(2048).enumerated() {
        time = index < due.count ? due[index] : time.advanced(by: .microseconds(1))
        guard let frame = assembler.feed(event, at: time) else { continue }
        for axis in frame.axes where recording.info.axes[axis.code] != nil {
            fuzzCheck((-1...1).contains(axis.value), "axis \(axis.code) normalised to \(axis.value)")
        }
        _ = formatter.describe(frame)
        var events: [MappedEvent] = []
        mapper.handle(frame, role: role, into: &events)
        for mapped in events {
            guard case .control(let control) = mapped else { continue }
            _ = formatter.apply(control)
            _ = machine.handle(control, at: time)
        }
        events.removeAll()
        mapper.tick(at: time, into: &events)
        for mapped in events {
            if case .control(let control) = mapped { _ = machine.handle(control, at: time) }
        }
        _ = machine.tick(at: time)
    }
    for mapped in mapper.deviceLost(role: role) {
        if case .control(let control) = mapped { _ = machine.handle(control, at: time) }
    }
    _ = formatter.stateText
    return 0
}
