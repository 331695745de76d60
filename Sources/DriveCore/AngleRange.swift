/// The angle range `A` (−2…2) derived from the steering angle θ (docs/protocol.md §3).
///
/// The bare table, after clamping θ to ±90°:
///
/// | θ | A |
/// |---|---|
/// | −15 ≤ θ ≤ 15 | 0 |
/// | 15 < θ ≤ 60 | 1 |
/// | 60 < θ | 2 |
/// | −60 ≤ θ < −15 | −1 |
/// | θ < −60 | −2 |
///
/// **Hysteresis** (`next`): the first range comes from the table. After that, with `h > 0`, `A` moves
/// up across a boundary `b ∈ {−60, −15, 15, 60}` only when `θ > b + h` and down only when `θ < b − h`
/// (both strict); a big jump may cross several boundaries at once (0 → 2). With `h = 0` (or a negative or
/// non-finite `h`) `next` is exactly the bare table, boundary values included (15 → 0, 60 → 1, −15 → 0,
/// −60 → −1). A non-finite θ (NaN, ±∞) never changes the range.
public enum AngleRange {
    /// The four boundaries between adjacent ranges, in ascending order: boundary `i` lies between
    /// range `i − 2` and range `i − 1`.
    public static let boundariesDegrees: [Double] = [-60, -15, 15, 60]

    /// The smallest range.
    public static let lowest = -2
    /// The largest range.
    public static let highest = 2

    /// θ clamped to −90…90 (NaN stays NaN).
    public static func clamp(_ angleDegrees: Double) -> Double {
        if angleDegrees > 90 { return 90 }
        if angleDegrees < -90 { return -90 }
        return angleDegrees
    }

    /// The bare table after clamping θ to ±90; a NaN angle gives 0.
    public static func table(_ angleDegrees: Double) -> Int {
        let theta = clamp(angleDegrees)
        if theta.isNaN { return 0 }
        if theta > 60 { return 2 }
        if theta > 15 { return 1 }
        if theta >= -15 { return 0 }
        if theta >= -60 { return -1 }
        return -2
    }

    /// The range after θ moved, given the current range (nil before the first angle: the table decides).
    ///
    /// See the type's documentation for the exact hysteresis rule. A non-finite θ returns the current
    /// range (or 0 when there is none); a current range outside −2…2 is clamped first.
    public static func next(current: Int?, angleDegrees: Double, hysteresisDegrees: Double) -> Int {
        guard angleDegrees.isFinite else { return current.map(clampRange) ?? 0 }
        guard let current else { return table(angleDegrees) }
        guard hysteresisDegrees.isFinite, hysteresisDegrees > 0 else { return table(angleDegrees) }
        let theta = clamp(angleDegrees)
        let h = hysteresisDegrees
        var range = clampRange(current)
        // Up: the boundary above range r is boundariesDegrees[r + 2].
        while range < highest, theta > boundariesDegrees[range + 2] + h { range += 1 }
        // Down: the boundary below range r is boundariesDegrees[r + 1].
        while range > lowest, theta < boundariesDegrees[range + 1] - h { range -= 1 }
        return range
    }

    private static func clampRange(_ range: Int) -> Int { min(highest, max(lowest, range)) }
}
