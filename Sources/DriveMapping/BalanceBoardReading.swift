import DriveInputModel
/// The four load cells of a Wii Balance Board as the kernel's `hid-wiimote` reports them, and what
/// they mean: the total weight and the centre of pressure.
///
/// The driver (drivers/hid/hid-wiimote-modules.c, `wiimod_bboard_in_ext`) reports each cell on
/// `ABS_HAT0X` (top right), `ABS_HAT0Y` (bottom right), `ABS_HAT1X` (top left) and `ABS_HAT1Y`
/// (bottom left), range 0…65535, already calibrated against the board's own 0/17/34 kg points to
/// units of 10 g (17 kg reads 1700). "Top" is the side away from the power button: forward.
public struct BalanceBoardReading: Hashable, Sendable {
    /// `ABS_HAT0X`: the top-right cell.
    public static let topRightCode: UInt16 = 16
    /// `ABS_HAT0Y`: the bottom-right cell.
    public static let bottomRightCode: UInt16 = 17
    /// `ABS_HAT1X`: the top-left cell.
    public static let topLeftCode: UInt16 = 18
    /// `ABS_HAT1Y`: the bottom-left cell.
    public static let bottomLeftCode: UInt16 = 19
    /// Kilograms per driver unit (10 g).
    public static let kilogramsPerUnit = 0.01
    /// Below this total the centre of pressure is noise: it is reported as the middle.
    public static let minimumWeightForCentre = 1.0

    /// The top-right cell, kg.
    public var topRight: Double = 0
    /// The bottom-right cell, kg.
    public var bottomRight: Double = 0
    /// The top-left cell, kg.
    public var topLeft: Double = 0
    /// The bottom-left cell, kg.
    public var bottomLeft: Double = 0

    /// An empty board.
    public init() {}

    /// The four cells in kg.
    public init(topRight: Double, bottomRight: Double, topLeft: Double, bottomLeft: Double) {
        self.topRight = topRight
        self.bottomRight = bottomRight
        self.topLeft = topLeft
        self.bottomLeft = bottomLeft
    }

    /// Takes the cell values among `axes` (raw driver units; other codes are ignored); returns whether
    /// any cell changed. Frames carry only the axes that changed, so the others keep their value.
    @discardableResult
    public mutating func apply(_ axes: [AxisValue]) -> Bool {
        var changed = false
        for axis in axes {
            let kilograms = max(0, Double(axis.raw)) * Self.kilogramsPerUnit
            switch axis.code {
            case Self.topRightCode: topRight = kilograms
            case Self.bottomRightCode: bottomRight = kilograms
            case Self.topLeftCode: topLeft = kilograms
            case Self.bottomLeftCode: bottomLeft = kilograms
            default: continue
            }
            changed = true
        }
        return changed
    }

    /// True for one of the four cell codes.
    public static func isCellCode(_ code: UInt16) -> Bool { (topRightCode...bottomLeftCode).contains(code) }

    /// The total weight, kg.
    public var weight: Double { topRight + bottomRight + topLeft + bottomLeft }

    /// The centre of pressure: x from −1 (all on the left) to 1 (all on the right), y from −1 (all at
    /// the back) to 1 (all at the front); (0, 0) below `minimumWeightForCentre`.
    public var centreOfPressure: (x: Double, y: Double) {
        let total = weight
        guard total >= Self.minimumWeightForCentre else { return (0, 0) }
        let x = (topRight + bottomRight - topLeft - bottomLeft) / total
        let y = (topRight + topLeft - bottomRight - bottomLeft) / total
        return (x, y)
    }
}
