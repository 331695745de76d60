import DriveCore
import DriveMapping
import DriveWebProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a phone's thumb stick into `.steer(θ)` and `.setSpeed(n)`, the speed through the trigger's own
/// `ThrottleMapper` and `SpeedSteps` (rounding down to tens, `[throttle] hysteresis`, capped by
/// `[drive] max_speed`) and the rest rule every analog throttle shares (`ThrottleRest`): after a stop it did
/// not ask for, the stick must come back to rest before it gives a speed again; a new stick starts that
/// way, so a page that opens with the stick held away from the centre cannot launch the car. `.setSpeed`
/// goes out only when the speed step changes. Pure.
package struct PhoneStick: Sendable {
    /// How the stick is read (the reading's own type, which DriveWebProtocol parses).
    package typealias Form = PhoneStickReading.Form

    /// The displacement that still counts as the stick at rest (the trigger's default dead zone).
    package static let deadzone = 0.05

    private let throttle: ThrottleMapper
    private var steps: SpeedSteps
    /// The speed last asked for with `.setSpeed`.
    package private(set) var speed = 0
    /// The stick's rest rule; a new stick waits for rest.
    private var rest = ThrottleRest(needsRest: true)
    /// True after a stop until the stick has been back at rest.
    package var needsRest: Bool { rest.needsRest }

    /// A stick whose full travel is `maxSpeed`, with `hysteresis` of a step at its boundaries.
    package init(maxSpeed: Int = 240, hysteresis: Double = SpeedSteps.defaultHysteresis) {
        throttle = ThrottleMapper(settings: ThrottleMapper.Settings(
            deadzone: Self.deadzone, fullScaleSpeed: maxSpeed, maxSpeed: maxSpeed, hysteresis: hysteresis))
        steps = throttle.makeSteps()
    }

    /// θ for `reading` (−90…90).
    package static func steering(_ reading: PhoneStickReading) -> Double {
        switch reading.form {
        case .polar:
            // The direction of a stick at rest is noise: straight ahead.
            guard travel(reading) > deadzone else { return 0 }
            let degrees = atan2(reading.x, reading.y) * 180 / .pi
            return min(max(degrees, -90), 90)
        case .xy:
            return min(max(reading.x, -1), 1) * 90
        }
    }

    /// The throttle's travel for `reading`, 0…1.
    package static func travel(_ reading: PhoneStickReading) -> Double {
        switch reading.form {
        case .polar: return min(1, (reading.x * reading.x + reading.y * reading.y).squareRoot())
        case .xy: return min(1, max(0, reading.y))
        }
    }

    /// The controls for one reading: the steer, then a speed when its step changed.
    package mutating func update(_ reading: PhoneStickReading) -> [Control] {
        var controls: [Control] = [.steer(Self.steering(reading))]
        let stepSpeed = throttle.speed(for: Self.travel(reading), steps: &steps)
        guard rest.admits(stepSpeed) else { return controls }
        if stepSpeed != speed {
            speed = stepSpeed
            controls.append(.setSpeed(stepSpeed))
        }
        return controls
    }

    /// The drive state's speed after a step: when the car stopped without this stick asking (lost input,
    /// engine off, the link), it must come back to rest before it gives a speed again.
    package mutating func carStopped(speed carSpeed: Int) {
        rest.carStopped(speed: carSpeed, asked: speed)
        guard rest.needsRest else { return }
        speed = 0
        steps.rest()
    }

    /// The stick lost control (its page or sensor went silent): it must come back to rest.
    package mutating func stopped() {
        rest.stopped()
        speed = 0
        steps.rest()
    }
}
