/// What a hands-free rider is doing, for the views (the terminal's run view, the dashboard): the
/// arming state, the tilt throttle's pitch, the board's weight and centre of pressure. Rounded when
/// made (0.5°, 0.5 kg, 0.01), so sensor noise is no change and a still rider redraws nothing.
public struct HandsFreeReading: Hashable, Sendable {
    /// Where arming stands.
    public enum Arming: String, Hashable, Sendable {
        /// No arming (the engine is the driver's).
        case off
        /// Nobody there, or moving.
        case waiting
        /// Still: the count runs.
        case settling
        /// Driving.
        case armed
        /// Stepped off: the engine goes off soon.
        case leaving
    }

    /// Where arming stands.
    public var arming: Arming
    /// The tilt throttle's pitch from neutral, degrees; nil without a tilt throttle or before a sample.
    public var pitchDegrees: Double?
    /// The board's total weight, kg; nil without a board.
    public var weightKilograms: Double?
    /// The board's centre of pressure, −1 (left) … 1 (right); nil without a board.
    public var centreX: Double?
    /// The board's centre of pressure, −1 (back) … 1 (front); nil without a board.
    public var centreY: Double?

    /// Creates a reading, rounding each value for display.
    public init(
        arming: Arming, pitchDegrees: Double? = nil, weightKilograms: Double? = nil, centreX: Double? = nil,
        centreY: Double? = nil
    ) {
        self.arming = arming
        self.pitchDegrees = pitchDegrees.map { ($0 * 2).rounded() / 2 }
        self.weightKilograms = weightKilograms.map { ($0 * 2).rounded() / 2 }
        self.centreX = centreX.map { ($0 * 100).rounded() / 100 }
        self.centreY = centreY.map { ($0 * 100).rounded() / 100 }
    }
}
