/// Whether someone stands on a balance board, from its total weight, with hysteresis so a light
/// rider near the threshold does not flicker: present from `minimumKilograms` up, absent again only
/// below `minimumKilograms − hysteresisKilograms`.
public struct WeightPresence: Hashable, Sendable {
    /// The weight from which a rider counts as present (config `board.min_weight_kg`).
    public let minimumKilograms: Double
    /// How far below the minimum the weight must fall to count as stepped off (`board.weight_hysteresis_kg`).
    public let hysteresisKilograms: Double
    /// The current answer.
    public private(set) var isPresent = false

    /// Creates a detector, nobody present.
    public init(minimumKilograms: Double = 20, hysteresisKilograms: Double = 5) {
        self.minimumKilograms = minimumKilograms
        self.hysteresisKilograms = max(0, hysteresisKilograms)
    }

    /// Feeds one weight; returns whether a rider is present (a non-finite weight counts as nobody).
    @discardableResult
    public mutating func update(kilograms: Double) -> Bool {
        guard kilograms.isFinite else {
            isPresent = false
            return false
        }
        if isPresent {
            if kilograms < minimumKilograms - hysteresisKilograms { isPresent = false }
        } else if kilograms >= minimumKilograms {
            isPresent = true
        }
        return isPresent
    }

    /// Nobody present (the board went away).
    public mutating func reset() { isPresent = false }
}
