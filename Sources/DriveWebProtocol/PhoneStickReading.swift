/// A phone's thumb stick as its page sends it (`{"c":"stick",…}`): x right, y forward, each −1…1.
public struct PhoneStickReading: Hashable, Sendable {
    /// How the stick is read.
    public enum Form: String, Hashable, Sendable, CaseIterable {
        /// The angle from straight up is θ (clamped ±90), the displacement 0…1 the throttle.
        case polar
        /// x is θ (x·90), y forward the throttle (back is 0).
        case xy
    }

    /// Right is positive.
    public var x: Double
    /// Forward (up on the screen) is positive.
    public var y: Double
    /// How the stick is read.
    public var form: Form

    /// Creates a reading.
    public init(x: Double, y: Double, form: Form) {
        self.x = x
        self.y = y
        self.form = form
    }
}
