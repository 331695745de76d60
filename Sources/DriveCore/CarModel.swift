/// The simulated car: what it knows from the frames it received, and the rules it can check.
///
/// The car cannot see the driver's controls, only frames. Rules it checks: after `E,0,0,0`
/// the engine is off and the next frame must not start above S=10; between consecutive motion
/// frames S changes by at most 10 (unless `allowSpeedJumps`, for an analog throttle), except that
/// a stop (S=0) is always allowed, from any speed (docs/protocol.md §8); `E` twice in a row is a
/// violation. After `E` the car learns the engine is on again from the next frame.
public struct CarModel: Hashable, Sendable {
    /// Accept speed changes larger than 10 between motion frames (analog throttle).
    public var allowSpeedJumps: Bool
    /// False after `E,0,0,0` until the next frame arrives.
    public private(set) var engineOn = true
    /// The last frame received, if any.
    public private(set) var lastFrame: Frame?
    /// The last motion frame's speed (0 after engine off), nil before any.
    public private(set) var lastMotionSpeed: Int?
    /// How many frames were accepted.
    public private(set) var frameCount = 0

    /// Creates a car that has not received anything yet.
    public init(allowSpeedJumps: Bool = false) { self.allowSpeedJumps = allowSpeedJumps }

    /// Takes `frame` into account; returns the rules it broke (empty when it is fine).
    public mutating func receive(_ frame: Frame) -> [String] {
        var violations: [String] = []
        frameCount += 1
        defer { lastFrame = frame }
        if frame.kind == .engineOff {
            if lastFrame?.kind == .engineOff { violations.append("E sent twice") }
            engineOn = false
            lastMotionSpeed = 0
            return violations
        }
        if !engineOn {
            engineOn = true
            if frame.speed > 10 {
                violations.append("engine was off: speed must start again from 0 (got S=\(frame.speed))")
            }
        } else if frame.isMotion, frame.speed != 0, !allowSpeedJumps, let previous = lastMotionSpeed,
            abs(frame.speed - previous) > 10
        {
            violations.append("speed jumped from \(previous) to \(frame.speed) (at most 10 per frame)")
        }
        if frame.isMotion { lastMotionSpeed = frame.speed }
        return violations
    }

    /// What the car does on `frame`, in words: "forward-right at 180", "stopped (forward, straight)",
    /// "F2 pressed", "engine off".
    public static func describe(_ frame: Frame) -> String {
        switch frame.kind {
        case .engineOff:
            return "engine off"
        case .f1, .f2, .f3, .f4, .f5:
            let number = Frame.Kind.allCases.firstIndex(of: frame.kind).map { $0 - 5 } ?? 0
            return "F\(number) pressed"
        default:
            if frame.speed == 0 {
                let direction = frame.direction == 1 ? "forward" : "reverse"
                let steering = frame.range < 0 ? "left" : (frame.range > 0 ? "right" : "straight")
                return "stopped (\(direction), \(steering))"
            }
            return "\(motionName(frame.kind)) at \(frame.speed)"
        }
    }

    /// The words for a motion kind: "forward", "forward-left", … "back-right".
    public static func motionName(_ kind: Frame.Kind) -> String {
        switch kind {
        case .forward: return "forward"
        case .forwardLeft: return "forward-left"
        case .forwardRight: return "forward-right"
        case .back: return "back"
        case .backLeft: return "back-left"
        case .backRight: return "back-right"
        default: return String(kind.rawValue)
        }
    }
}
