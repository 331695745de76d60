/// A phone's raw orientation as its page sends it in tilt mode (`{"c":"tilt",…}`): the W3C
/// `deviceorientation` β and γ, the screen's rotation (`screen.orientation.angle`) and how it is held.
public struct PhoneTiltReading: Hashable, Sendable {
    /// How the phone is held.
    public enum Hold: String, Hashable, Sendable, CaseIterable {
        /// Upright, screen towards the driver: rotation about the screen's normal steers.
        case wheel
        /// Screen up: rolling about the screen's vertical axis steers.
        case flat
    }

    /// Rotation about the device's x axis, −180…180 degrees (90: upright in portrait).
    public var beta: Double
    /// Rotation about the device's y axis, −90…90 degrees (positive: the right edge down).
    public var gamma: Double
    /// The screen's rotation from the device's natural orientation: 0, 90, 180, 270 (or −90).
    public var screenAngle: Int
    /// How the phone is held.
    public var hold: Hold
    /// The page's count of its sensor events so far (`seq`): a report whose count did not move since the
    /// phone's previous one is a heartbeat, not input (the dashboard's `SteeringGuard`).
    public var sequence: Int

    /// Creates a reading.
    public init(beta: Double, gamma: Double, screenAngle: Int = 0, hold: Hold, sequence: Int = 0) {
        self.beta = beta
        self.gamma = gamma
        self.screenAngle = screenAngle
        self.hold = hold
        self.sequence = sequence
    }
}
