import DriveCore

/// Maps terminal keys to drive controls: `e` Engine, Up/`+` Speed+, Down/`-` Speed−,
/// `g` gear, Left/Right steer by a step, `c` centre, `1`–`5` F1–F5, `q` quit.
public struct KeyboardControls: Sendable {
    /// What a key asks for.
    public enum Action: Hashable, Sendable {
        case control(Control)
        case quit
    }

    /// Degrees per Left/Right press.
    public var steerStepDegrees: Double
    /// The keyboard's own steering angle (it has no stick to read it from).
    public private(set) var angleDegrees: Double = 0

    /// Creates the mapping with a steering step (default 20°).
    public init(steerStepDegrees: Double = 20) {
        self.steerStepDegrees = steerStepDegrees
    }

    /// The action for `key`, or nil for keys that mean nothing.
    public mutating func action(for key: TerminalKey) -> Action? {
        switch key {
        case .up, .character("+"), .character("="): return .control(.speedUp)
        case .down, .character("-"), .character("_"): return .control(.speedDown)
        case .left: return steer(by: -steerStepDegrees)
        case .right: return steer(by: steerStepDegrees)
        case .character("c"):
            angleDegrees = 0
            return .control(.steer(0))
        case .character("e"): return .control(.engine)
        case .character("g"): return .control(.gear)
        case .character("q"), .interrupt: return .quit
        case .character(let c):
            if let digit = c.wholeNumberValue, (1...5).contains(digit) { return .control(.function(digit)) }
            return nil
        }
    }

    private mutating func steer(by delta: Double) -> Action {
        angleDegrees = min(90, max(-90, angleDegrees + delta))
        return .control(.steer(angleDegrees))
    }

    /// The help line shown under the run view.
    public static let help =
        "e engine · ↑/+ speed+ · ↓/- speed- · g gear · ←/→ steer · c centre · 1-5 F1-F5 · q quit"
}
