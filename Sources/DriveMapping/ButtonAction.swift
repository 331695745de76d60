import DriveCore

/// What a button does (config values `engine`, `speed_up`, `speed_down`, `gear`, `f1`…`f5`,
/// `deadman`, `calibrate`).
public enum ButtonAction: String, CaseIterable, Hashable, Sendable {
    case engine = "engine"
    case speedUp = "speed_up"
    case speedDown = "speed_down"
    case gear = "gear"
    case f1 = "f1"
    case f2 = "f2"
    case f3 = "f3"
    case f4 = "f4"
    case f5 = "f5"
    /// Held / released: `Control.deadman(held:)`.
    case deadman = "deadman"
    /// Store the current tilt as straight ahead.
    case calibrate = "calibrate"

    /// The control a single activation sends; nil for `deadman` (press and release differ) and `calibrate`.
    public var control: Control? {
        switch self {
        case .engine: return .engine
        case .speedUp: return .speedUp
        case .speedDown: return .speedDown
        case .gear: return .gear
        case .f1: return .function(1)
        case .f2: return .function(2)
        case .f3: return .function(3)
        case .f4: return .function(4)
        case .f5: return .function(5)
        case .deadman, .calibrate: return nil
        }
    }

    /// True for the actions hold-to-repeat applies to (`speed_up`, `speed_down`).
    public var repeats: Bool { self == .speedUp || self == .speedDown }

    /// Every valid config spelling, comma-separated (for error messages).
    public static var validNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
