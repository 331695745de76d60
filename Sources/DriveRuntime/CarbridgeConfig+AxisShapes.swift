import DriveConfig
import DriveInput

extension CarbridgeConfig {
    /// How the driving pad's axes are normalised where the config says more than the kernel's ranges do: a
    /// racing wheel's axis over its whole range without the flat, and its pedals one-sided (mirrored with
    /// `[throttle] invert`) whatever their code, since a G29 has its gas pedal on `ABS_Y`, a stick's code.
    /// Empty for every other config, so a pad reads as it always did.
    public var gamepadAxisShapes: [UInt16: AxisShape] {
        var shapes: [UInt16: AxisShape] = [:]
        let pedal: AxisShape = throttle.invert ? .pedal : .oneSided
        if steering.source == .wheel {
            if let codes = mapping.stickAxisCodes { shapes[codes.x] = .wheel }
            if let code = mapping.throttleAxisCode { shapes[code] = pedal }
        } else if throttle.invert, let code = mapping.throttleAxisCode {
            shapes[code] = pedal
        }
        if let code = mapping.brakeAxisCode { shapes[code] = pedal }
        return shapes
    }
}
