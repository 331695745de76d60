import DriveCore

/// Arming and the dead-man without hands: the engine goes on when a rider has been present and
/// still for `armAfter`; stepping off stops the car at once and switches the engine off
/// `engineOffAfter` later. Pure and time-driven like `DriveMachine`: `update` on every sample,
/// `tick(at:)` at `nextDeadline`.
///
/// "Still" is the caller's to decide (the lean inside the dead zone); any sample that is not still
/// restarts the count (a wobble). Presence is the board's weight (`WeightPresence`) or, for a tilt rig,
/// always true while the sensor delivers.
public struct HandsFreeArming: Hashable, Sendable {
    /// The tunables (config `[handsfree]`).
    public struct Settings: Hashable, Sendable {
        /// How long a present rider must stay still before the engine goes on (default 2 s).
        public var armAfter: Duration
        /// How long after stepping off the engine goes off (default 5 s).
        public var engineOffAfter: Duration

        /// Creates settings.
        public init(armAfter: Duration = .seconds(2), engineOffAfter: Duration = .seconds(5)) {
            self.armAfter = armAfter
            self.engineOffAfter = engineOffAfter
        }
    }

    /// Where the rider is.
    public enum State: Hashable, Sendable {
        /// Nobody there (the start, and after the engine went off).
        case absent
        /// Present but moving: the count has not started.
        case unsettled
        /// Present and still since `since`; armed at `since + armAfter`.
        case settling(since: Instant)
        /// Driving: the throttle may act.
        case armed
        /// Stepped off at `since` while armed: the car was stopped; the engine goes off at `since + engineOffAfter`.
        case leaving(since: Instant)
    }

    /// What the caller must do.
    public enum Action: Hashable, Sendable {
        /// Turn the engine on (if it is off): the rider is armed, the speed starts at 0.
        case arm
        /// S := 0 and the stop frame, now.
        case stop
        /// Turn the engine off (if it is on).
        case engineOff
    }

    /// The tunables.
    public let settings: Settings
    /// The current state.
    public private(set) var state: State = .absent

    /// Creates the machine, nobody present.
    public init(settings: Settings = .init()) { self.settings = settings }

    /// True while the throttle may act.
    public var isArmed: Bool { state == .armed }

    /// When `tick` has work: the arming instant or the engine-off instant; nil otherwise.
    public var nextDeadline: Instant? {
        switch state {
        case .settling(let since): return since.advanced(by: settings.armAfter)
        case .leaving(let since): return since.advanced(by: settings.engineOffAfter)
        case .absent, .unsettled, .armed: return nil
        }
    }

    /// One sample at `now`: whether a rider is present and whether they are still.
    public mutating func update(present: Bool, still: Bool, at now: Instant) -> [Action] {
        var actions = tick(at: now)
        switch (state, present) {
        case (.armed, false):
            state = .leaving(since: now)
            actions.append(.stop)
        case (.armed, true), (.leaving, false), (.absent, false):
            break
        case (.unsettled, false), (.settling, false):
            state = .absent
        case (.absent, true), (.unsettled, true), (.leaving, true):
            // Back on before the engine went off counts as a new rider: settle again.
            state = still ? .settling(since: now) : .unsettled
        case (.settling, true):
            if !still { state = .unsettled }
        }
        return actions
    }

    /// Does what is due at `now`: arming after a still `armAfter`, the engine off `engineOffAfter` after stepping off.
    public mutating func tick(at now: Instant) -> [Action] {
        guard let deadline = nextDeadline, now >= deadline else { return [] }
        switch state {
        case .settling:
            state = .armed
            return [.arm]
        case .leaving:
            state = .absent
            return [.engineOff]
        case .absent, .unsettled, .armed:
            return []
        }
    }

    /// The input went away (a board disconnected, a sensor fell silent): forget the rider; the loss
    /// itself stops the car (`.inputLost`).
    public mutating func reset() { state = .absent }
}
