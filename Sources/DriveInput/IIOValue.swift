/// The number in an IIO sysfs attribute (`in_accel_x_raw`, `in_accel_scale`, `in_accel_offset`, …).
///
/// The kernel writes these as plain decimals: `-1234`, `0.009576806`, sometimes with an exponent. Pure:
/// the reader hands in the file's text. Accepted: optional surrounding whitespace, an optional sign, digits
/// with at most one `.`, an optional `e`/`E` exponent — and only when the value is finite. Rejected with
/// a reason: empty text, anything else `Double(_:)` would take (`nan`, `inf`, `infinity`, hex floats
/// such as `0x1p3`), and decimals too large for a Double (`1e400`), so no NaN or infinity ever
/// becomes a sample.
public enum IIOValue {
    /// The longest text accepted (sysfs attributes are one short line; the reader reads 64 bytes).
    public static let maximumLength = 64

    /// Parses one attribute's text; throws `IIOValueError` (without `path`) saying what is wrong.
    public static func parse(_ text: String) throws(IIOValueError) -> Double {
        var scalars = Substring(text).unicodeScalars
        let space: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        while let first = scalars.first, space(first) { scalars.removeFirst() }
        while let last = scalars.last, space(last) { scalars.removeLast() }
        let trimmed = String(scalars)
        func fail(_ reason: String) -> IIOValueError { IIOValueError(text: trimmed, reason: reason) }
        guard !trimmed.isEmpty else { throw fail("the value is empty") }
        guard trimmed.unicodeScalars.count <= maximumLength else {
            throw fail("the value is longer than \(maximumLength) characters")
        }
        guard isDecimal(trimmed) else { throw fail("not a decimal number") }
        guard let value = Double(trimmed) else { throw fail("not a decimal number") }
        guard value.isFinite else { throw fail("the number is too large for a finite value") }
        return value
    }

    /// `[+-]digits[.digits][(e|E)[+-]digits]` with at least one digit in the mantissa.
    static func isDecimal(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        func digits() -> Int {
            var count = 0
            while let byte = bytes.first, (0x30...0x39).contains(byte) { bytes.removeFirst(); count += 1 }
            return count
        }
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes.removeFirst() }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes.removeFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes.removeFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes.removeFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

/// An IIO sysfs value that is not a finite decimal number: which file, what it said, and why it is refused.
public struct IIOValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The attribute file, when known.
    public var path: String?
    /// The text that was read (whitespace trimmed).
    public var text: String
    /// Why it was refused.
    public var reason: String

    /// Creates an error.
    public init(path: String? = nil, text: String, reason: String) {
        self.path = path
        self.text = text
        self.reason = reason
    }

    public var description: String {
        let quoted = text.unicodeScalars.count > IIOValue.maximumLength
            ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(IIOValue.maximumLength))) + "…" : text
        return "\(path ?? "IIO value"): \"\(quoted)\" is not a finite decimal number (\(reason))"
    }
}
