/// The drive state machine of docs/protocol.md: controls and time in, frames out.
///
/// It is pure: it never reads a clock and never does I/O. The runtime feeds it controls with
/// `handle(_:at:)`, calls `tick(at:)` when `nextDeadline` is reached, and writes the returned frames
/// to the link. `handle` never runs due ticks itself.
///
/// The rules it implements are docs/protocol.md, their only statement: the state (§1), the angle
/// range with hysteresis (§3), the controls and the engine-off rule (§4), event frames, the stream on
/// a fixed grid and engine off → `E,0,0,0` (§5), and the link, the safety handshake on `.linkUp`,
/// input loss, dead-man, suspend, shutdown, the idle timeout and the kiosk's turn limit (§6). The details left
/// to this type:
/// `.function(n)` with n outside 1…5 is ignored, `speedLimit` is the ceiling rounded down to a
/// multiple of 10, and a period under 1 ms is treated as 1 ms.
public struct DriveMachine {
    /// The tunables this machine was created with.
    public let settings: DriveSettings
    /// The current drive state.
    public private(set) var state: DriveState
    /// When the next stream frame is due; nil while not streaming.
    public private(set) var streamDeadline: Instant?
    /// When the last driver activity happened (for the idle timeout); nil before any.
    public private(set) var lastActivity: Instant?

    /// θ at the last activity (steers closer than the threshold to it are not activity).
    private var activityAngleDegrees: Double = 0
    /// False until the first steer: that one takes its range from the bare table.
    private var hasSteered = false
    /// Whether the link to the car is up (between `.linkUp` and `.linkLost`); frames go out only then.
    public private(set) var linkIsUp = false
    /// True after `.inputLost` until `.inputRestored`: Speed+ and setSpeed are ignored.
    public private(set) var inputMissing = false
    /// The kiosk's turn limit, when there is one: a turn starts when the engine goes on.
    public private(set) var turn: SessionLimit?
    /// Why the last `tick` turned the engine off (nil: it did not), so the runtime can tell the driver.
    public private(set) var lastTimedStop: TimedStop?

    /// What turned the engine off in a `tick`.
    public enum TimedStop: Hashable, Sendable {
        /// No driver activity for `settings.idleTimeout`.
        case idleTimeout
        /// The kiosk turn's `limit` is over.
        case turnLimit(Duration)
    }

    /// Creates a machine in the spec's initial state (engine off, S 0, D 1, θ 0, A 0); with `sessionLimit`
    /// (a kiosk), each turn ends that long after the engine went on, with the engine off.
    public init(settings: DriveSettings = .init(), sessionLimit: Duration? = nil) {
        self.settings = settings
        self.state = .initial
        self.periodNanoseconds = max(settings.period.nanoseconds, 1_000_000)
        self.turn = sessionLimit.map { SessionLimit(limit: $0) }
    }

    /// The speed Speed+ and setSpeed may reach: the ceiling rounded down to a multiple of 10, at least 0.
    public var speedLimit: Int { max(0, settings.speedCeiling) / 10 * 10 }

    /// The streaming period in nanoseconds (at least 1 ms, so a bad config can never spin).
    private let periodNanoseconds: Int64

    /// When the idle timeout fires; nil when it is off or the engine is off.
    public var idleDeadline: Instant? {
        guard state.engineOn, let timeout = settings.idleTimeout, let lastActivity else { return nil }
        return lastActivity.advanced(by: timeout)
    }

    /// The earliest instant `tick` has work; nil when nothing is scheduled (an idle bridge never wakes). Kept
    /// up to date by `handle` and `tick`.
    public private(set) var nextDeadline: Instant?

    /// Works `nextDeadline` out again, at the end of `handle` and `tick`.
    private mutating func updateNextDeadline() {
        nextDeadline = Instant.earliest(Instant.earliest(streamDeadline, idleDeadline), state.engineOn ? turn?.deadline : nil)
    }

    /// Applies one control at `now` and returns the frames to send at once, in order (none while the
    /// link is down).
    public mutating func handle(_ control: Control, at now: Instant) -> FrameBatch {
        var frames = FrameBatch()
        switch control {
        case .engine:
            noteActivity(at: now)
            if state.engineOn {
                turnEngineOff(at: now, into: &frames)
            } else {
                state.engineOn = true
            }
        case .speedUp:
            noteActivity(at: now)
            guard state.engineOn, motionAllowed, state.speed < speedLimit else { break }
            state.speed = min(state.speed + 10, speedLimit)
            send(state.motionFrame, at: now, into: &frames)
        case .speedDown:
            noteActivity(at: now)
            guard state.engineOn, state.speed > 0 else { break }
            state.speed = max(state.speed - 10, 0)
            send(state.motionFrame, at: now, into: &frames)
        case .gear:
            noteActivity(at: now)
            guard state.engineOn else { break }
            state.direction = state.direction == 1 ? 0 : 1
            send(state.motionFrame, at: now, into: &frames)
        case .function(let number):
            noteActivity(at: now)
            guard state.engineOn, let kind = Frame.Kind.function(number) else { break }
            let frame = Frame(kind: kind, range: state.range, speed: state.speed, direction: state.direction)
            send(frame, at: now, into: &frames)
        case .setSpeed(let requested):
            noteActivity(at: now)
            guard state.engineOn, motionAllowed else { break }
            let speed = min(max(requested, 0), speedLimit) / 10 * 10
            guard speed != state.speed else { break }
            state.speed = speed
            send(state.motionFrame, at: now, into: &frames)
        case .steer(let angleDegrees):
            guard angleDegrees.isFinite else { break }
            let theta = AngleRange.clamp(angleDegrees)
            let range = AngleRange.next(
                current: hasSteered ? state.range : nil, angleDegrees: theta,
                hysteresisDegrees: settings.hysteresisDegrees)
            hasSteered = true
            let rangeChanged = range != state.range
            state.angleDegrees = theta
            state.range = range
            let threshold = settings.activityThresholdDegrees
            if rangeChanged || !(abs(theta - activityAngleDegrees) < threshold) {
                noteActivity(at: now)
            }
            if rangeChanged, state.engineOn {
                send(state.motionFrame, at: now, into: &frames)
            }
        case .deadman(let held):
            noteActivity(at: now)
            state.deadmanHeld = held
            if !held, settings.deadmanRequired, state.engineOn, state.speed > 0 {
                stop(at: now, into: &frames)
            }
        case .inputLost:
            inputMissing = true
            guard state.engineOn else { break }
            switch settings.onInputLost {
            case .stop: stop(at: now, into: &frames)
            case .engineOff: turnEngineOff(at: now, into: &frames)
            }
        case .inputRestored:
            inputMissing = false
        case .linkLost:
            linkIsUp = false
            state.speed = 0
            streamDeadline = nil
        case .linkUp:
            linkIsUp = true
            if state.engineOn {
                stop(at: now, into: &frames)
            } else {
                send(.engineOff, at: now, into: &frames)
            }
        case .suspend:
            if state.engineOn { stop(at: now, into: &frames) }
        case .shutdown:
            if state.engineOn { turnEngineOff(at: now, into: &frames) }
        }
        turn?.follow(engineOn: state.engineOn, at: now)
        updateNextDeadline()
        return linkIsUp ? frames : FrameBatch()
    }

    /// Does whatever is due at `now`: at most one stream frame, then the idle timeout; or, when a kiosk turn
    /// is over, its end instead of the stream frame (the stop frame when the car is moving, then
    /// `E,0,0,0`). Returns the frames (at most two).
    public mutating func tick(at now: Instant) -> FrameBatch {
        var frames = FrameBatch()
        lastTimedStop = nil
        let turnOver = state.engineOn && (turn?.isOver(at: now) ?? false)
        let idle = idleDeadline.flatMap { $0 <= now ? $0 : nil }
        if let due = streamDeadline, due <= now, !turnOver, idle.map({ due < $0 }) ?? true {
            let period = periodNanoseconds
            // The frame counts as sent at its deadline; skip whole missed periods, staying on the grid.
            let missed = (now.nanoseconds &- due.nanoseconds) / period
            frames.append(state.motionFrame)
            streamDeadline = Instant(nanoseconds: due.nanoseconds &+ (missed &+ 1) &* period)
        }
        if let idle {
            turnEngineOff(at: idle, into: &frames)
            lastTimedStop = .idleTimeout
        } else if turnOver, let turn {
            if state.speed > 0 { stop(at: now, into: &frames) }
            turnEngineOff(at: now, into: &frames)
            lastTimedStop = .turnLimit(turn.limit)
        }
        turn?.follow(engineOn: state.engineOn, at: now)
        updateNextDeadline()
        return linkIsUp ? frames : FrameBatch()
    }

    // MARK: - Helpers

    /// True unless the dead-man button is required and not held.
    private var deadmanAllowsMotion: Bool { !settings.deadmanRequired || state.deadmanHeld }

    /// Speed+ and setSpeed may act: the link is up, no driving input is missing, the dead-man allows it.
    private var motionAllowed: Bool { linkIsUp && !inputMissing && deadmanAllowsMotion }

    /// Records driver activity at `now` (postpones the idle timeout).
    private mutating func noteActivity(at now: Instant) {
        lastActivity = now
        activityAngleDegrees = state.angleDegrees
    }

    /// Appends `frame` as sent at `at` and restarts the streaming period.
    private mutating func send(_ frame: Frame, at sentAt: Instant, into frames: inout FrameBatch) {
        frames.append(frame)
        streamDeadline = state.engineOn && state.speed > 0 ? Instant(nanoseconds: sentAt.nanoseconds &+ periodNanoseconds) : nil
    }

    /// S := 0 and the stop frame (motion frame with S=0) is sent.
    private mutating func stop(at now: Instant, into frames: inout FrameBatch) {
        state.speed = 0
        send(state.motionFrame, at: now, into: &frames)
    }

    /// Engine on → off: `E,0,0,0` once, S := 0, streaming stops.
    private mutating func turnEngineOff(at now: Instant, into frames: inout FrameBatch) {
        guard state.engineOn else { return }
        state.engineOn = false
        state.speed = 0
        send(.engineOff, at: now, into: &frames)
    }
}
