import DriveCore
import DriveInputModel
import DriveMapping

/// The text of `carbridge monitor`: raw frames in words, the controls they became, and the
/// steering angle θ with its range `A` (tracked with `AngleRange.next`, hysteresis included). Pure.
public struct MonitorFormatter {
    /// The hysteresis used for the range, in degrees (`drive.hysteresis_deg`).
    public let hysteresisDegrees: Double
    /// The current steering angle θ in degrees (0 until the first steer).
    public private(set) var angleDegrees = 0.0
    /// The current range `A`; nil before the first steer (then 0 is shown).
    public private(set) var range: Int?
    private let resolver: any EventCodeResolver
    /// A balance board's cells as last reported (frames carry only the cells that changed).
    public private(set) var board = BalanceBoardReading()

    /// Creates a formatter; `resolver` names evdev codes (`DriveInput.EventCodeNames`, libevdev's names,
    /// for the real monitor).
    public init(hysteresisDegrees: Double, resolver: any EventCodeResolver) {
        self.hysteresisDegrees = hysteresisDegrees
        self.resolver = resolver
    }

    /// The frame's raw content: `ABS_X -32768 (-1.00)`, `BTN_SOUTH down`, `accel x … y … z … m/s²`; with a
    /// pad's standard names (its GameControllerDB layout), each code is followed by them: `BTN_BASE4 [start] down`.
    public func describe(
        _ frame: InputFrame, keyNames: [UInt16: [String]] = [:], axisNames: [UInt16: [String]] = [:]
    ) -> String {
        func standard(_ names: [String]?) -> String {
            guard let names, !names.isEmpty else { return "" }
            return " [\(names.joined(separator: ", "))]"
        }
        var parts: [String] = []
        for key in frame.keys {
            let name = resolver.name(of: EventCode(type: 1, code: key.code)) ?? "key \(key.code)"
            parts.append("\(name)\(standard(keyNames[key.code])) \(key.pressed ? "down" : "up")")
        }
        for axis in frame.axes {
            let name = resolver.name(of: EventCode(type: 3, code: axis.code)) ?? "axis \(axis.code)"
            parts.append("\(name)\(standard(axisNames[axis.code])) \(axis.raw) (\(Self.fixed(axis.value, 2)))")
        }
        if let a = frame.acceleration {
            parts.append("accel x \(Self.fixed(a.x, 2)) y \(Self.fixed(a.y, 2)) z \(Self.fixed(a.z, 2)) m/s²")
        }
        return parts.isEmpty ? "(no change)" : parts.joined(separator: ", ")
    }

    /// A balance board's frame: its four cells, the total weight and the centre of pressure,
    /// e.g. `cells TR 19.50 BR 10.50 TL 19.50 BL 10.50 kg, weight 60.00 kg, CoP x +0.00 y +0.30`.
    public mutating func describeBoard(_ frame: InputFrame) -> String {
        guard board.apply(frame.axes) else { return describe(frame) }
        let centre = board.centreOfPressure
        var text = "cells TR \(Self.fixed(board.topRight, 2)) BR \(Self.fixed(board.bottomRight, 2)) "
            + "TL \(Self.fixed(board.topLeft, 2)) BL \(Self.fixed(board.bottomLeft, 2)) kg, "
            + "weight \(Self.fixed(board.weight, 2)) kg, CoP x \(Self.signedFraction(centre.x)) y \(Self.signedFraction(centre.y))"
        let keys = describe(InputFrame(time: frame.time, keys: frame.keys))
        if !frame.keys.isEmpty { text += ", " + keys }
        return text
    }

    /// `+0.30`, `-0.05`.
    static func signedFraction(_ value: Double) -> String { (value < 0 ? "-" : "+") + fixed(abs(value), 2) }

    /// Records `control` (a steer moves θ and the range) and returns its name, e.g. `steer -42.5°`.
    public mutating func apply(_ control: Control) -> String {
        if case .steer(let degrees) = control, degrees.isFinite {
            angleDegrees = AngleRange.clamp(degrees)
            range = AngleRange.next(current: range, angleDegrees: angleDegrees, hysteresisDegrees: hysteresisDegrees)
        }
        return Self.name(of: control)
    }

    /// θ and the range as shown after each line: `θ -42.5° / range -1`.
    public var stateText: String {
        "θ \(Self.signed(angleDegrees))° / range \(range ?? 0)"
    }

    /// One monitor line: `source  raw → controls / θ … / range …` (controls `—` when none).
    public func line(source: String, raw: String, controls: [String]) -> String {
        "\(source)  \(raw) → \(controls.isEmpty ? "—" : controls.joined(separator: ", ")) / \(stateText)"
    }

    /// A control in the words of the config (`engine`, `speed_up`, `f3`, `steer +12.0°`, …).
    public static func name(of control: Control) -> String {
        switch control {
        case .engine: return "engine"
        case .speedUp: return "speed_up"
        case .speedDown: return "speed_down"
        case .gear: return "gear"
        case .function(let number): return "f\(number)"
        case .steer(let degrees): return "steer \(signed(degrees))°"
        case .setSpeed(let speed): return "speed = \(speed)"
        case .deadman(let held): return held ? "deadman held" : "deadman released"
        case .inputLost: return "INPUT LOST"
        case .inputRestored: return "input restored"
        case .linkLost: return "link lost"
        case .linkUp: return "link up"
        case .suspend: return "suspend"
        case .shutdown: return "shutdown"
        }
    }

    /// `value` with `digits` decimals (no Foundation): `-0.50`, `9.81`. Total for any Double: `nan`,
    /// `±inf` and values too large to scale into an `Int64` (|value| × 10^digits ≥ 1e18, where a Double has
    /// no fractional digits left anyway) are shown in Swift's own spelling (`nan`, `-inf`, `1e+20`).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        let digits = min(max(digits, 0), 9)
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        guard abs(value) * scale < 1e18 else { return "\(value)" }
        let scaled = (abs(value) * scale).rounded()
        var whole = Int64(scaled / scale)
        var fraction = Int64(scaled) - whole * Int64(scale)
        if fraction < 0 { whole -= 1; fraction += Int64(scale) }  // the division rounded up
        var fractionText = String(fraction)
        while fractionText.count < digits { fractionText = "0" + fractionText }
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return digits > 0 ? "\(sign)\(whole).\(fractionText)" : "\(sign)\(whole)"
    }

    /// An angle with one decimal and an explicit sign: `+12.5`, `-90.0`, `0.0`.
    static func signed(_ degrees: Double) -> String {
        let text = fixed(degrees, 1)
        return degrees > 0 && text != "0.0" ? "+" + text : text
    }
}
