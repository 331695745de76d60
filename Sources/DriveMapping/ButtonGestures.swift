import DriveCore
import DriveInputModel

/// Press/release timing for mapped buttons: short press, long press and hold-to-repeat. Pure and
/// time-driven like `DriveMachine`: feed presses and releases with their instants, call `tick(at:)`
/// at `nextDeadline`.
///
/// - A button with only a short binding fires its action at the press, immediately.
/// - A button that also has a long-press binding fires nothing at the press. Released before
///   `longPressDuration` → its short action (if any) at the release; held that long → its long action,
///   once, at the deadline (or at the release, if no tick ran in between).
/// - `deadman` sends `.deadman(held: true)` when it fires and `.deadman(held: false)` at the release.
/// - Hold-to-repeat (off by default) applies to `speed_up`/`speed_down` fired at the press: after
///   `repeatDelay` the action repeats every `repeatInterval` while held. A late tick fires once and
///   continues on the same grid (no bursts).
/// - A second press of a button already held (from the same source) is ignored, as is a release of
///   a button not held.
public struct ButtonGestures {
    /// The timing tunables (config `[buttons]`).
    public struct Settings: Hashable, Sendable {
        /// How long a button must be held for its long-press action (default 600 ms).
        public var longPressDuration: Duration
        /// Whether `speed_up`/`speed_down` repeat while held (default false).
        public var repeatEnabled: Bool
        /// Time from the press to the first repeat (default 400 ms).
        public var repeatDelay: Duration
        /// Time between repeats (default 100 ms; at least 1 ms is used).
        public var repeatInterval: Duration

        /// Creates settings; every parameter has a default.
        public init(
            longPressDuration: Duration = .milliseconds(600), repeatEnabled: Bool = false,
            repeatDelay: Duration = .milliseconds(400), repeatInterval: Duration = .milliseconds(100)
        ) {
            self.longPressDuration = longPressDuration
            self.repeatEnabled = repeatEnabled
            self.repeatDelay = repeatDelay
            self.repeatInterval = repeatInterval
        }
    }

    /// A held button, from one device role.
    struct HoldKey: Hashable {
        var role: DeviceRole
        var input: ButtonInput
    }

    /// The timing state of one held button.
    struct Hold {
        /// Order of the press, to keep simultaneous deadlines deterministic.
        var sequence: Int
        /// When the long-press action fires; nil when there is none or it already fired.
        var longDeadline: Instant?
        /// The action that fired at the press (nil when the button waits for short/long).
        var pressAction: ButtonAction?
        /// When the next repeat fires; nil when not repeating.
        var nextRepeat: Instant?
        /// True once `.deadman(held: true)` was sent for this hold.
        var deadmanSent = false
    }

    /// The bindings.
    public let map: ButtonMap
    /// The timing tunables.
    public let settings: Settings
    private var holds: [HoldKey: Hold] = [:]
    private var sequence = 0

    /// Creates the gesture timer for a button map.
    public init(map: ButtonMap, settings: Settings = .init()) {
        self.map = map
        self.settings = settings
    }

    /// Whether `input` from `role` is currently held (and bound).
    public func isHeld(_ input: ButtonInput, role: DeviceRole) -> Bool {
        holds[HoldKey(role: role, input: input)] != nil
    }

    /// True while a bound button is held: only then can `nextDeadline` be non-nil.
    public var isHoldingAny: Bool { !holds.isEmpty }

    /// The earliest instant `tick` has work; nil when no long press or repeat is pending.
    public var nextDeadline: Instant? {
        var earliest: Instant?
        for hold in holds.values {
            if let deadline = hold.longDeadline, earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
            if let deadline = hold.nextRepeat, earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        return earliest
    }

    /// A bound button went down at `now`; returns the events.
    public mutating func press(_ input: ButtonInput, role: DeviceRole, at now: Instant) -> [MappedEvent] {
        var events: [MappedEvent] = []
        press(input, role: role, at: now, into: &events)
        return events
    }

    /// A bound button went down at `now`; appends the events to `events` (no allocation of its own).
    public mutating func press(_ input: ButtonInput, role: DeviceRole, at now: Instant, into events: inout [MappedEvent]) {
        let key = HoldKey(role: role, input: input)
        guard holds[key] == nil else { return }
        let shortAction = map.shortPress[input]
        let longAction = map.longPress[input]
        guard shortAction != nil || longAction != nil else { return }
        sequence += 1
        var hold = Hold(sequence: sequence)
        if longAction != nil {
            hold.longDeadline = now.advanced(by: settings.longPressDuration)
        } else if let shortAction {
            hold.pressAction = shortAction
            fire(shortAction, hold: &hold, into: &events)
            if settings.repeatEnabled, shortAction.repeats {
                hold.nextRepeat = now.advanced(by: settings.repeatDelay)
            }
        }
        holds[key] = hold
    }

    /// A button went up at `now`; returns the events.
    public mutating func release(_ input: ButtonInput, role: DeviceRole, at now: Instant) -> [MappedEvent] {
        var events: [MappedEvent] = []
        release(input, role: role, at: now, into: &events)
        return events
    }

    /// A button went up at `now`; appends the events to `events`.
    public mutating func release(_ input: ButtonInput, role: DeviceRole, at now: Instant, into events: inout [MappedEvent]) {
        guard var hold = holds.removeValue(forKey: HoldKey(role: role, input: input)) else { return }
        if let deadline = hold.longDeadline {
            if now >= deadline, let longAction = map.longPress[input] {
                fire(longAction, hold: &hold, into: &events)
            } else if now < deadline, let shortAction = map.shortPress[input] {
                fire(shortAction, hold: &hold, into: &events)
            }
        }
        if hold.deadmanSent { events.append(.control(.deadman(held: false))) }
    }

    /// Fires due long presses and repeats, in deadline order; returns the events.
    public mutating func tick(at now: Instant) -> [MappedEvent] {
        var events: [MappedEvent] = []
        tick(at: now, into: &events)
        return events
    }

    /// Fires due long presses and repeats, in deadline order; appends the events to `events`.
    public mutating func tick(at now: Instant, into events: inout [MappedEvent]) {
        var due: [(at: Instant, sequence: Int, key: HoldKey)] = []
        for (key, hold) in holds {
            var first: Instant?
            if let deadline = hold.longDeadline, deadline <= now { first = deadline }
            if let deadline = hold.nextRepeat, deadline <= now, first.map({ deadline < $0 }) ?? true { first = deadline }
            if let first { due.append((first, hold.sequence, key)) }
        }
        due.sort { ($0.at, $0.sequence) < ($1.at, $1.sequence) }
        for item in due {
            guard var hold = holds[item.key] else { continue }
            if let deadline = hold.longDeadline, deadline <= now, let longAction = map.longPress[item.key.input] {
                hold.longDeadline = nil
                fire(longAction, hold: &hold, into: &events)
            }
            if let repeatAt = hold.nextRepeat, repeatAt <= now, let action = hold.pressAction {
                fire(action, hold: &hold, into: &events)
                let interval = max(settings.repeatInterval.nanoseconds, 1_000_000)
                let missed = (now.nanoseconds &- repeatAt.nanoseconds) / interval
                hold.nextRepeat = Instant(nanoseconds: repeatAt.nanoseconds &+ (missed &+ 1) &* interval)
            }
            holds[item.key] = hold
        }
    }

    /// Forgets every button held on `role` (all roles when nil), e.g. when the device went away.
    /// No pending short/long action fires; a held dead-man is released.
    public mutating func releaseAll(role: DeviceRole? = nil) -> [MappedEvent] {
        var events: [MappedEvent] = []
        let keys = holds.filter { role == nil || $0.key.role == role }.sorted { $0.value.sequence < $1.value.sequence }
        for (key, hold) in keys {
            holds[key] = nil
            if hold.deadmanSent { events.append(.control(.deadman(held: false))) }
        }
        return events
    }

    /// Appends the events one activation of `action` produces.
    private func fire(_ action: ButtonAction, hold: inout Hold, into events: inout [MappedEvent]) {
        switch action {
        case .deadman:
            guard !hold.deadmanSent else { return }
            hold.deadmanSent = true
            events.append(.control(.deadman(held: true)))
        case .calibrate:
            events.append(.calibrate)
        default:
            if let control = action.control { events.append(.control(control)) }
        }
    }
}
