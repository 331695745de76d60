import DriveConfig
import DriveCore
import DriveInputModel
import DriveMapping
import DriveWebProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a phone's orientation into the steering angle θ by the rules of any accelerometer: the page does no
/// steering math, it sends β/γ, and this makes them the device's up vector, turns that into the screen's frame,
/// and hands it to a `TiltMapper` with the `[steering]` sensitivity, invert and smoothing.
///
/// The neutral is this phone's own (0 until *Set straight*), one per hold: `[steering] neutral_deg` belongs to
/// the board's sensor, whose mounting has nothing to do with how a phone is held. The axes are those of the
/// screen as the driver sees it (x right, y up, z out of the screen), whatever the screen's rotation:
/// - `flat` (screen up): lateral x, vertical z: tipping the screen's right edge down steers right;
/// - `wheel` (upright, screen towards the driver, usually landscape): lateral x, vertical y: turning the phone
///   clockwise, like a steering wheel, steers right.
/// Pure: time is passed in.
package struct PhoneTilt: Sendable {
    /// How the phone is held (the reading's own type, which DriveWebProtocol parses).
    package typealias Hold = PhoneTiltReading.Hold

    /// The tunables shared with every accelerometer (`[steering]`).
    package struct Settings: Hashable, Sendable {
        /// θ per degree of roll.
        package var sensitivity: Double
        /// Flip left and right.
        package var invert: Bool
        /// The low-pass time constant (zero: none).
        package var smoothing: Duration

        /// Creates settings (the config's defaults).
        package init(sensitivity: Double = 1, invert: Bool = false, smoothing: Duration = .milliseconds(80)) {
            self.sensitivity = sensitivity
            self.invert = invert
            self.smoothing = smoothing
        }

        /// The `[steering]` settings of `config`.
        package init(config: CarbridgeConfig) {
            self.init(
                sensitivity: config.steering.sensitivity, invert: config.steering.invert,
                smoothing: .nanoseconds(Int64(config.steering.smoothingMilliseconds * 1_000_000)))
        }
    }

    /// The tunables.
    package let settings: Settings
    /// This phone's neutral for each hold (degrees of raw roll; absent: 0).
    package private(set) var neutrals: [Hold: Double] = [:]
    private var hold: Hold?
    private var mapper: TiltMapper
    /// The last reading's vector, for *Set straight*.
    private var lastVector: Vector3?

    /// Creates the state of one phone.
    package init(settings: Settings = .init()) {
        self.settings = settings
        mapper = TiltMapper()
    }

    /// The device's up vector (the opposite of gravity) in device coordinates for β and γ (degrees), from the
    /// W3C's Z-X'-Y'' Euler angles: the third row of Rz(α)·Rx(β)·Ry(γ), so α (the compass) plays no part.
    package static func up(beta: Double, gamma: Double) -> Vector3 {
        let b = beta * .pi / 180
        let g = gamma * .pi / 180
        return Vector3(x: -sin(g) * cos(b), y: sin(b), z: cos(g) * cos(b))
    }

    /// `vector` (device coordinates) in the frame of the screen rotated by `angle` degrees: the screen's x is
    /// to the right and its y up as the driver sees it. At 90 the device's top points left, so the screen's
    /// right is the device's −y and its up the device's x.
    package static func screenFrame(_ vector: Vector3, angle: Int) -> Vector3 {
        switch ((angle % 360) + 360) % 360 {
        case 90: return Vector3(x: -vector.y, y: vector.x, z: vector.z)
        case 180: return Vector3(x: -vector.x, y: -vector.y, z: vector.z)
        case 270: return Vector3(x: vector.y, y: -vector.x, z: vector.z)
        default: return vector
        }
    }

    /// The vector handed to the tilt mapper: the up vector in the screen's frame with x flipped, so the
    /// lateral component grows as the phone rolls to the right (as `TiltMapper.Settings.lateralAxis` expects).
    package static func mapperVector(_ reading: PhoneTiltReading) -> Vector3 {
        let screen = screenFrame(up(beta: reading.beta, gamma: reading.gamma), angle: reading.screenAngle)
        return Vector3(x: -screen.x, y: screen.y, z: screen.z)
    }

    /// Feeds one reading received at `time`: θ (−90…90, smoothed), or nil when the vector has no direction.
    package mutating func update(_ reading: PhoneTiltReading, at time: Instant) -> Double? {
        if reading.hold != hold {
            hold = reading.hold
            mapper = makeMapper(for: reading.hold)
        }
        let vector = Self.mapperVector(reading)
        lastVector = vector
        return mapper.update(gravity: vector, at: time)
    }

    /// *Set straight*: the last reading's raw roll becomes this hold's neutral (the filter starts again).
    /// Returns the neutral, or nil before any reading.
    @discardableResult
    package mutating func straighten() -> Double? {
        guard let hold, let lastVector, let neutral = mapper.calibrate(from: lastVector) else { return nil }
        neutrals[hold] = neutral
        return neutral
    }

    /// Forgets the filter's history (after lost input, so an old angle does not linger in the smoothing).
    package mutating func reset() { mapper.reset() }

    private func makeMapper(for hold: Hold) -> TiltMapper {
        TiltMapper(settings: TiltMapper.Settings(
            lateralAxis: .x, verticalAxis: hold == .flat ? .z : .y, neutralDegrees: neutrals[hold] ?? 0,
            sensitivity: settings.sensitivity, invert: settings.invert, filterTimeConstant: settings.smoothing))
    }
}
