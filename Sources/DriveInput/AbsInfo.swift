/// How an absolute axis is normalised.
public enum AxisShape: String, Hashable, Sendable {
    /// A stick or hat: −1…1 around the centre, with the flat region as 0.
    case centred
    /// A trigger or pedal: 0…1 from rest to fully pressed.
    case oneSided
    /// A racing wheel's rotation: −1…1 over the whole range, the flat ignored (hid-input gives a joystick's
    /// axes a sixteenth of their range as flat, which on a 900° wheel would swallow 56° around the centre).
    case wheel
    /// A pedal that reports its maximum at rest (Logitech's): 0…1 from released to fully pressed, the flat
    /// at the released end.
    case pedal
}

/// An evdev axis's range (`struct input_absinfo`): minimum, maximum, fuzz, flat, resolution, and the current value.
public struct AbsInfo: Hashable, Sendable {
    /// The smallest value the axis reports.
    public var minimum: Int32
    /// The largest value the axis reports.
    public var maximum: Int32
    /// Noise the kernel already filters out (not applied again here).
    public var fuzz: Int32
    /// Values within `flat` of the centre count as centre.
    public var flat: Int32
    /// Units per mm (or per g for accelerometers, per radian for rotation axes); 0 when unknown.
    public var resolution: Int32
    /// The axis's current value (0 when unknown).
    public var value: Int32

    /// Creates an absinfo.
    public init(minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0, value: Int32 = 0) {
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
        self.value = value
    }

    /// The shape carbridge assumes for axis `code` with this range: centred when the range goes below 0,
    /// for hats, and for the stick axes `ABS_X`/`ABS_Y`/`ABS_RX`/`ABS_RY` (DS4-style 0…255 sticks);
    /// one-sided otherwise (triggers `ABS_Z`/`ABS_RZ`/`ABS_GAS`/`ABS_BRAKE` reporting 0…255 or 0…1023).
    public func defaultShape(forCode code: UInt16) -> AxisShape {
        if minimum < 0 || EvdevCode.isHat(code) { return .centred }
        switch code {
        case EvdevCode.absX, EvdevCode.absY, EvdevCode.absRX, EvdevCode.absRY: return .centred
        default: return .oneSided
        }
    }

    /// `raw` normalised: centred → −1…1 (within `flat` of the midpoint = 0, and the rest rescaled so full
    /// deflection still reaches ±1); one-sided → 0…1 (within `flat` of the minimum = 0). Clamped; a
    /// degenerate range (maximum ≤ minimum) gives 0.
    public func normalise(_ raw: Int32, shape: AxisShape) -> Double {
        let low = Double(minimum)
        let high = Double(maximum)
        guard high > low else { return 0 }
        let flatWidth = Double(max(flat, 0))
        switch shape {
        case .centred:
            let centre = (low + high) / 2
            let half = (high - low) / 2
            let offset = Double(raw) - centre
            let magnitude = abs(offset)
            if magnitude <= flatWidth { return 0 }
            let usable = half - flatWidth
            guard usable > 0 else { return offset < 0 ? -1 : 1 }
            let scaled = min((magnitude - flatWidth) / usable, 1)
            return offset < 0 ? -scaled : scaled
        case .wheel:
            let half = (high - low) / 2
            return min(max((Double(raw) - (low + high) / 2) / half, -1), 1)
        case .pedal:
            // Mirrored in 64 bits (the sum of two 32-bit ends can overflow), then as a one-sided axis.
            let mirrored = Int64(minimum) + Int64(maximum) - Int64(raw)
            let clamped = Int32(clamping: min(max(mirrored, Int64(minimum)), Int64(maximum)))
            return normalise(clamped, shape: .oneSided)
        case .oneSided:
            let fromRest = Double(raw) - low
            if fromRest <= flatWidth { return 0 }
            let usable = high - low - flatWidth
            guard usable > 0 else { return 1 }
            return min((fromRest - flatWidth) / usable, 1)
        }
    }
}
