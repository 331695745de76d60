/// One axis value after normalisation with the device's absinfo.
public struct AxisValue: Hashable, Sendable {
    /// The `EV_ABS` code (`ABS_X` = 0, …).
    public var code: UInt16
    /// Normalised value: −1…1 for centred axes (sticks, hats), 0…1 for one-sided ones (triggers),
    /// with the device's flat region already taken as centre.
    public var value: Double
    /// The raw kernel value.
    public var raw: Int32

    /// Creates an axis value.
    public init(code: UInt16, value: Double, raw: Int32) {
        self.code = code
        self.value = value
        self.raw = raw
    }
}
