/// The tilt neutrals the calibrate button set, in degrees: tilt steering's roll and the tilt throttle's
/// pitch, measured from the same gravity sample. Both are saved in the config file together, as
/// `carbridge calibrate` saves them.
public struct TiltNeutrals: Hashable, Sendable {
    /// The roll that means straight ahead (`[steering] neutral_deg`); nil without tilt steering.
    public var roll: Double?
    /// The pitch that means standing still (`[throttle] neutral_deg`); nil without a tilt throttle.
    public var pitch: Double?

    /// Creates the neutrals.
    public init(roll: Double?, pitch: Double?) {
        self.roll = roll
        self.pitch = pitch
    }
}
