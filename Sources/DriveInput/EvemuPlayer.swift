import DriveCore
import DriveInputModel
import DriveSystem

/// Replays an `EvemuRecording` on the event loop with its original relative timing (timers on an absolute
/// grid from the start instant, so delays never accumulate) through the same frame assembler a live
/// device uses. Each frame's `time` is the instant its events were due.
public final class EvemuPlayer {
    /// The recording being played.
    public let recording: EvemuRecording
    /// Called with every raw event when it is due (for `carbridge monitor`).
    public var onEvent: ((InputEvent) -> Void)?
    /// Called with every completed frame.
    public var onFrame: ((InputFrame) -> Void)?
    /// Called once after the last event was played.
    public var onFinished: (() -> Void)?
    /// True after the last event was played (or for an empty recording, once started).
    public private(set) var isFinished = false
    /// The instant the first event was (or will be) played.
    public private(set) var startInstant: Instant?

    private let loop: EventLoop
    private var assembler: EvdevFrameAssembler
    private var nextIndex = 0
    private var timer: EventLoop.TimerID?

    /// Prepares a replay of `recording` (accelerometer recordings, with `INPUT_PROP_ACCELEROMETER`, also
    /// produce `InputFrame.acceleration`).
    public init(recording: EvemuRecording, loop: EventLoop, axisShapes: [UInt16: AxisShape] = [:]) {
        self.recording = recording
        self.loop = loop
        self.assembler = EvdevFrameAssembler(
            absInfo: recording.info.axes, axisShapes: axisShapes, isAccelerometer: recording.info.isAccelerometer)
    }

    deinit {
        if let timer { loop.cancel(timer) }
    }

    /// The instant event `index` is due: the start plus its time since the first event (never earlier
    /// than the event before it).
    public func dueInstant(ofEvent index: Int) -> Instant? {
        guard let start = startInstant, recording.events.indices.contains(index) else { return nil }
        return Self.instant(start, plusMicroseconds: offsetMicroseconds(index))
    }

    private func offsetMicroseconds(_ index: Int) -> Int64 {
        guard let first = recording.events.first else { return 0 }
        var offset: Int64 = 0
        for position in 0...index {
            offset = max(offset, Self.microseconds(from: first, to: recording.events[position]))
        }
        return offset
    }

    /// The time from `first` to `event` in microseconds, saturating instead of trapping for timestamps
    /// far apart (a recording made with `EvemuRecording(...)` directly is not range-checked like a parsed one).
    static func microseconds(from first: InputEvent, to event: InputEvent) -> Int64 {
        // From the seconds and microseconds fields, not `timeMicroseconds`, which wraps for huge seconds.
        let (seconds, secondsOverflow) = event.seconds.subtractingReportingOverflow(first.seconds)
        let (micro, microOverflow) = event.microseconds.subtractingReportingOverflow(first.microseconds)
        let saturated = secondsOverflow ? (event.seconds < first.seconds ? Int64.min : Int64.max)
            : (seconds < 0 ? Int64.min : Int64.max)
        if secondsOverflow || microOverflow { return saturated }
        let (whole, wholeOverflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if wholeOverflow { return saturated }
        let (total, totalOverflow) = whole.addingReportingOverflow(micro)
        if totalOverflow { return micro < 0 ? Int64.min : Int64.max }
        return total
    }

    /// `start` plus `microseconds` (≥ 0), saturating at the end of the clock instead of wrapping into the past.
    static func instant(_ start: Instant, plusMicroseconds microseconds: Int64) -> Instant {
        let room = Int64.max - max(0, start.nanoseconds)
        let (nanoseconds, overflow) = max(0, microseconds).multipliedReportingOverflow(by: 1000)
        if overflow || nanoseconds > room { return Instant(nanoseconds: start.nanoseconds + room) }
        return Instant(nanoseconds: start.nanoseconds + nanoseconds)
    }

    /// Starts playing: the first event at `start` (default: now).
    public func start(at start: Instant? = nil) {
        guard startInstant == nil else { return }
        let origin = start ?? loop.now()
        startInstant = origin
        scheduleNext()
    }

    /// Stops playing for good (no `onFinished`).
    public func stop() {
        stopped = true
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    private var lastOffsetMicroseconds: Int64 = 0
    private var stopped = false

    private func offset(of index: Int) -> Int64 {
        guard let first = recording.events.first else { return 0 }
        return max(lastOffsetMicroseconds, Self.microseconds(from: first, to: recording.events[index]))
    }

    private func scheduleNext() {
        guard let origin = startInstant, !stopped else { return }
        guard nextIndex < recording.events.count else {
            if !isFinished {
                isFinished = true
                onFinished?()
            }
            return
        }
        let due = Self.instant(origin, plusMicroseconds: offset(of: nextIndex))
        timer = loop.schedule(at: due) { [weak self] in self?.play(due: due) }
    }

    private func play(due: Instant) {
        timer = nil
        guard let origin = startInstant else { return }
        // Play every event due at this instant (a whole SYN_REPORT frame usually shares one timestamp).
        while nextIndex < recording.events.count {
            let eventOffset = offset(of: nextIndex)
            if Self.instant(origin, plusMicroseconds: eventOffset) > due { break }
            lastOffsetMicroseconds = eventOffset
            let event = recording.events[nextIndex]
            nextIndex += 1
            onEvent?(event)
            if let frame = assembler.feed(event, at: due) { onFrame?(frame) }
            if stopped { return }  // stop() from a callback is respected
        }
        scheduleNext()
    }
}
