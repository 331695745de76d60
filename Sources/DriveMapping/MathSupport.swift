#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's pure math functions, wrapped so only this file imports the platform module.
enum MathSupport {
    /// atan2(y, x) in degrees, −180…180.
    static func atan2Degrees(_ y: Double, _ x: Double) -> Double {
        atan2(y, x) * 180 / Double.pi
    }

    /// An angle difference wrapped into −180…180.
    static func wrapDegrees(_ angle: Double) -> Double {
        guard angle.isFinite else { return angle }
        var wrapped = fmod(angle, 360)
        if wrapped > 180 { wrapped -= 360 }
        if wrapped < -180 { wrapped += 360 }
        return wrapped
    }

    /// `value` clamped to lower…upper (NaN stays NaN).
    static func clamp(_ value: Double, _ lower: Double, _ upper: Double) -> Double {
        if value < lower { return lower }
        if value > upper { return upper }
        return value
    }
}
