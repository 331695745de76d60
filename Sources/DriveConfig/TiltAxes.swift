import DriveInputModel
import DriveMapping

/// `steering.tilt_axes`: the two accelerometer axes whose atan2 is the roll (`"x,z"`), each optionally
/// flipped with a `-` (`"-y,z"`). Parsed once when the config is loaded.
public struct TiltAxes: Hashable, Sendable, CustomStringConvertible {
    /// One axis, possibly flipped.
    public struct Axis: Hashable, Sendable, CustomStringConvertible {
        /// Which accelerometer axis.
        public var axis: TiltMapper.Axis
        /// True for `-x` and the like.
        public var flipped: Bool

        /// Creates an axis.
        public init(_ axis: TiltMapper.Axis, flipped: Bool = false) {
            self.axis = axis
            self.flipped = flipped
        }

        public var description: String { (flipped ? "-" : "") + axis.rawValue }
    }

    /// The first axis: the lateral one.
    public var lateral: Axis
    /// The second axis: the one pointing down at rest.
    public var vertical: Axis

    /// Creates the pair; the two must be different axes.
    public init?(lateral: Axis, vertical: Axis) {
        guard lateral.axis != vertical.axis else { return nil }
        self.lateral = lateral
        self.vertical = vertical
    }

    /// Reads `"x,z"`, `"-y, z"`, …: two different axes among x, y, z, each optionally with a leading `-`.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",").map(Self.trimmingSpaces)
        guard parts.count == 2 else { return nil }
        func axis(_ text: String) -> Axis? {
            let flipped = text.hasPrefix("-")
            guard let axis = TiltMapper.Axis(rawValue: String(flipped ? text.dropFirst() : text[...])) else { return nil }
            return Axis(axis, flipped: flipped)
        }
        guard let lateral = axis(parts[0]), let vertical = axis(parts[1]) else { return nil }
        self.init(lateral: lateral, vertical: vertical)
    }

    /// `part` without the spaces at either end. Index walking, not `drop`/`reversed()`, whose wrappers'
    /// generic types would be instantiated at run time at every start (the default value is parsed when
    /// the config keys are first used).
    private static func trimmingSpaces(_ part: Substring) -> String {
        var start = part.startIndex
        var end = part.endIndex
        while start < end, part[start] == " " { start = part.index(after: start) }
        while end > start, part[part.index(before: end)] == " " { end = part.index(before: end) }
        return String(part[start..<end])
    }

    /// `x,z`, `-y,z`.
    public var description: String { "\(lateral),\(vertical)" }

    /// The flips as a diagonal mount matrix (the tilt mapper applies it before taking the roll).
    public var mountMatrix: MountMatrix {
        var diagonal = Vector3(x: 1, y: 1, z: 1)
        for axis in [lateral, vertical] where axis.flipped {
            switch axis.axis {
            case .x: diagonal.x = -1
            case .y: diagonal.y = -1
            case .z: diagonal.z = -1
            }
        }
        return MountMatrix(
            Vector3(x: diagonal.x, y: 0, z: 0), Vector3(x: 0, y: diagonal.y, z: 0), Vector3(x: 0, y: 0, z: diagonal.z))
    }
}
