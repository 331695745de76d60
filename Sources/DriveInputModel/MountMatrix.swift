/// A 3×3 accelerometer mount matrix: `device = M · sensor`, row by row (as the kernel and
/// iio-sensor-proxy apply it).
///
/// Text form (sysfs `in_accel_mount_matrix`, udev/hwdb `ACCEL_MOUNT_MATRIX`, config):
/// `"x1, y1, z1; x2, y2, z2; x3, y3, z3"` — three rows separated by `;`, three numbers per row
/// separated by `,`, any whitespace around them. An empty string means the identity (as in
/// iio-sensor-proxy); a row of all zeroes is rejected (as in iio-sensor-proxy).
public struct MountMatrix: Hashable, Sendable, CustomStringConvertible {
    /// The three rows.
    public var rows: [Vector3]

    /// Creates a matrix from three rows.
    public init(_ row1: Vector3, _ row2: Vector3, _ row3: Vector3) {
        rows = [row1, row2, row3]
    }

    /// The identity: the sensor is mounted the way the device expects.
    public static let identity = MountMatrix(
        Vector3(x: 1, y: 0, z: 0), Vector3(x: 0, y: 1, z: 0), Vector3(x: 0, y: 0, z: 1))

    /// `M · v`.
    public func apply(_ v: Vector3) -> Vector3 {
        func dot(_ row: Vector3) -> Double { row.x * v.x + row.y * v.y + row.z * v.z }
        return Vector3(x: dot(rows[0]), y: dot(rows[1]), z: dot(rows[2]))
    }

    /// The text form, e.g. `1, 0, 0; 0, 1, 0; 0, 0, 1`.
    public var description: String {
        rows.map { "\(format($0.x)), \(format($0.y)), \(format($0.z))" }.joined(separator: "; ")
    }

    private func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    /// Why a mount matrix text could not be parsed.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that was given.
        public var text: String
        /// What is wrong with it.
        public var reason: String

        public var description: String {
            "invalid mount matrix \"\(text)\": \(reason); expected three rows of three numbers like \"1, 0, 0; 0, 1, 0; 0, 0, 1\""
        }
    }

    /// Parses the text form (see the type's documentation).
    public static func parse(_ text: String) throws(ParseError) -> MountMatrix {
        let trimmed = trim(text)
        if trimmed.isEmpty { return .identity }
        let rowTexts = trimmed.split(separator: ";", omittingEmptySubsequences: false)
        guard rowTexts.count == 3 else {
            throw ParseError(text: text, reason: "found \(rowTexts.count) row(s) separated by ';', need 3")
        }
        var rows: [Vector3] = []
        for (rowIndex, rowText) in rowTexts.enumerated() {
            let fields = rowText.split(separator: ",", omittingEmptySubsequences: false).map { trim(String($0)) }
            guard fields.count == 3 else {
                throw ParseError(text: text, reason: "row \(rowIndex + 1) has \(fields.count) number(s), need 3")
            }
            var numbers: [Double] = []
            for field in fields {
                guard let number = parseNumber(field) else {
                    throw ParseError(text: text, reason: "row \(rowIndex + 1): \"\(field)\" is not a number")
                }
                numbers.append(number)
            }
            if numbers.allSatisfy({ $0 == 0 }) {
                let axis = ["x", "y", "z"][rowIndex]
                throw ParseError(text: text, reason: "row \(rowIndex + 1) (axis \(axis)) is all zeroes")
            }
            rows.append(Vector3(x: numbers[0], y: numbers[1], z: numbers[2]))
        }
        return MountMatrix(rows[0], rows[1], rows[2])
    }

    /// A finite decimal number (`1`, `-0.5`, `+1`, `1e0`).
    private static func parseNumber(_ text: String) -> Double? {
        guard !text.isEmpty, let number = Double(text), number.isFinite else { return nil }
        // Reject things Double(_:) accepts but a matrix never contains (hex floats, "nan", "inf").
        let allowed = Set("0123456789+-.eE")
        guard text.allSatisfy({ allowed.contains($0) }) else { return nil }
        return number
    }

    /// `text` without leading/trailing whitespace and surrounding double quotes.
    private static func trim(_ text: String) -> String {
        var scalars = Substring(text)
        let strip: Set<Character> = [" ", "\t", "\n", "\r", "\r\n", "\""]
        while let first = scalars.first, strip.contains(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, strip.contains(last) { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
