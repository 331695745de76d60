import DriveConfig
import DriveMapping

extension TiltNeutrals {
    /// The config keys the neutrals are saved as, each with its value: `[steering] neutral_deg` for the
    /// roll, then `[throttle] neutral_deg` for the pitch (the order `carbridge calibrate` writes them in).
    var configValues: [(key: ConfigKey<Double>, degrees: Double)] {
        var values: [(key: ConfigKey<Double>, degrees: Double)] = []
        if let roll { values.append((ConfigKeys.neutral, roll)) }
        if let pitch { values.append((ConfigKeys.pitchNeutral, pitch)) }
        return values
    }
}
