/// Turns a lean into a speed and a direction: the pitch of a tilt rig in degrees (`[throttle]
/// source = "tilt"`) or a balance board's forward centre of pressure (`source = "board"`).
///
/// Positive lean is forward. Inside the dead zone (|lean| ≤ `deadZone`) the speed is 0. Past it the
/// speed grows linearly from the first step (10) at the dead zone's edge to `maxSpeed` at `fullScale`,
/// rounded down to a multiple of 10 (`SpeedSteps`, which also holds a lean resting on a step boundary
/// on one step), never above `maxSpeed`. Leaning back past the dead zone is a stop, unless `reverse` is
/// set: then it is the same speed backwards.
public struct LeanThrottleMapper: Hashable, Sendable {
    /// The tunables (config `[throttle]` for tilt, `[board]` for the board).
    public struct Settings: Hashable, Sendable {
        /// Lean ignored around neutral (degrees for tilt, a fraction of the board's half-width for the board).
        public var deadZone: Double
        /// The lean that gives `maxSpeed` (same unit as `deadZone`, larger than it).
        public var fullScale: Double
        /// The cap (config `drive.max_speed`), rounded down to a multiple of 10, at most 240.
        public var maxSpeed: Int
        /// Leaning back drives backwards (false: it stops).
        public var reverse: Bool
        /// The margin a step boundary must be passed by, as a fraction of a step (config `[throttle] hysteresis`).
        public var hysteresis: Double

        /// Creates settings; every parameter has a default (5°, 25°, 240, no reverse, a quarter of a step).
        public init(
            deadZone: Double = 5, fullScale: Double = 25, maxSpeed: Int = 240, reverse: Bool = false,
            hysteresis: Double = SpeedSteps.defaultHysteresis
        ) {
            self.deadZone = deadZone
            self.fullScale = fullScale
            self.maxSpeed = maxSpeed
            self.reverse = reverse
            self.hysteresis = hysteresis
        }
    }

    /// What the lean asks for.
    public struct Command: Hashable, Sendable {
        /// 0, 10, 20 … the cap.
        public var speed: Int
        /// True to drive backwards (only with `reverse`, and only with a speed above 0).
        public var backwards: Bool

        /// Creates a command.
        public init(speed: Int, backwards: Bool = false) {
            self.speed = speed
            self.backwards = backwards
        }

        /// Speed 0, forwards.
        public static let stop = Command(speed: 0)
    }

    /// The tunables.
    public var settings: Settings

    /// Creates a mapper.
    public init(settings: Settings = .init()) { self.settings = settings }

    /// The dead zone actually used (a non-finite or negative one counts as 0).
    private var deadZone: Double { settings.deadZone.isFinite ? max(0, settings.deadZone) : 0 }

    /// True when `lean` is inside the dead zone (a non-finite lean counts as outside: it is no neutral).
    public func isInDeadZone(_ lean: Double) -> Bool {
        lean.isFinite && abs(lean) <= deadZone
    }

    /// Fresh steps with this mapper's hysteresis, for `command(for:steps:)`.
    public func makeSteps() -> SpeedSteps { SpeedSteps(hysteresis: settings.hysteresis) }

    /// The command for `lean` on its own, without hysteresis (a non-finite lean is a stop).
    public func command(for lean: Double) -> Command {
        var steps = SpeedSteps(hysteresis: 0)
        return command(for: lean, steps: &steps)
    }

    /// The command for `lean` with `steps` holding the current step (its hysteresis applies); a stop
    /// puts `steps` at rest.
    public func command(for lean: Double, steps: inout SpeedSteps) -> Command {
        guard lean.isFinite, !isInDeadZone(lean), lean > 0 || settings.reverse else {
            steps.rest()
            return .stop
        }
        let limit = max(0, min(settings.maxSpeed, 240)) / 10
        let span = settings.fullScale.isFinite ? settings.fullScale - deadZone : 0
        // A full scale at or inside the dead zone: any lean past it is full speed.
        let fraction = span > 0 ? min((abs(lean) - deadZone) / span, 1) : 1
        // From the first step at the dead zone's edge to the last at full scale.
        let position = 1 + fraction * Double(max(limit - 1, 0))
        let speed = steps.update(position: position, limit: limit)
        return Command(speed: speed, backwards: lean < 0 && speed > 0)
    }

    /// The steering angle for a sideways lean with the same dead zone and full scale: 0 inside the
    /// dead zone, then linear up to ±90° at `fullScale` (a board's centre of pressure; positive is right).
    public func steeringDegrees(for lean: Double) -> Double {
        guard lean.isFinite, !isInDeadZone(lean) else { return 0 }
        let span = settings.fullScale.isFinite ? settings.fullScale - deadZone : 0
        let fraction = span > 0 ? min((abs(lean) - deadZone) / span, 1) : 1
        return (lean < 0 ? -1 : 1) * fraction * 90
    }
}
