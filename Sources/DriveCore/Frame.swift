/// One message to the car: `T,A,S,D` (docs/protocol.md §2).
public struct Frame: Hashable, Sendable, CustomStringConvertible {
    /// The command type `T`.
    public enum Kind: Character, CaseIterable, Hashable, Sendable {
        case forward = "M"
        case forwardLeft = "L"
        case forwardRight = "R"
        case back = "B"
        case backLeft = "X"
        case backRight = "Y"
        case f1 = "F"
        case f2 = "G"
        case f3 = "H"
        case f4 = "I"
        case f5 = "J"
        case engineOff = "E"

        /// The letter as an ASCII byte (what goes on the wire).
        public var asciiByte: UInt8 {
            switch self {
            case .forward: return UInt8(ascii: "M")
            case .forwardLeft: return UInt8(ascii: "L")
            case .forwardRight: return UInt8(ascii: "R")
            case .back: return UInt8(ascii: "B")
            case .backLeft: return UInt8(ascii: "X")
            case .backRight: return UInt8(ascii: "Y")
            case .f1: return UInt8(ascii: "F")
            case .f2: return UInt8(ascii: "G")
            case .f3: return UInt8(ascii: "H")
            case .f4: return UInt8(ascii: "I")
            case .f5: return UInt8(ascii: "J")
            case .engineOff: return UInt8(ascii: "E")
            }
        }

        /// True for the six motion kinds (`M L R B X Y`).
        public var isMotion: Bool {
            switch self {
            case .forward, .forwardLeft, .forwardRight, .back, .backLeft, .backRight: return true
            default: return false
            }
        }

        /// The kind for function key `number` (1…5), or nil.
        public static func function(_ number: Int) -> Kind? {
            switch number {
            case 1: return .f1
            case 2: return .f2
            case 3: return .f3
            case 4: return .f4
            case 5: return .f5
            default: return nil
            }
        }

        /// The motion kind for a direction (1 forward, 0 reverse) and an angle range.
        public static func motion(direction: Int, range: Int) -> Kind {
            if direction == 1 {
                return range < 0 ? .forwardLeft : (range > 0 ? .forwardRight : .forward)
            }
            return range < 0 ? .backLeft : (range > 0 ? .backRight : .back)
        }
    }

    /// `T`, the command type.
    public var kind: Kind
    /// `A`, the angle range, −2…2.
    public var range: Int
    /// `S`, the speed, 0…240 in steps of 10.
    public var speed: Int
    /// `D`, the direction: 1 forward, 0 reverse.
    public var direction: Int

    /// Creates a frame from its four fields.
    public init(kind: Kind, range: Int, speed: Int, direction: Int) {
        self.kind = kind
        self.range = range
        self.speed = speed
        self.direction = direction
    }

    /// The motion frame (`M L R B X Y`) for a state.
    public static func motion(range: Int, speed: Int, direction: Int) -> Frame {
        Frame(kind: .motion(direction: direction, range: range), range: range, speed: speed, direction: direction)
    }

    /// `E,0,0,0`, sent once when the engine is turned off.
    public static let engineOff = Frame(kind: .engineOff, range: 0, speed: 0, direction: 0)

    /// True for motion frames, which may be coalesced to the newest (docs/protocol.md §5.6).
    public var isMotion: Bool { kind.isMotion }

    /// The frame's text without terminator, e.g. `R,2,180,1`.
    public var text: String { "\(kind.rawValue),\(range),\(speed),\(direction)" }

    public var description: String { text }
}
