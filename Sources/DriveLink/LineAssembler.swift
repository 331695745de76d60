/// Splits the bytes the car sends into displayable lines (docs/protocol.md §7).
///
/// Lines end with `\n` or `\r\n`; a line longer than `maximumLineBytes` is cut and marked
/// `…[cut]` (the rest up to the next newline is dropped); bytes that are not UTF-8, and control
/// characters other than tab, are shown escaped as `\xFF`. Pure: feed it whatever `read` returned.
public struct LineAssembler: Hashable, Sendable {
    /// The longest line kept whole (1 KiB).
    public static let maximumLineBytes = 1024
    /// Appended to a cut line.
    public static let cutMarker = "…[cut]"

    private var buffer: [UInt8] = []
    private var discardingRest = false

    /// Creates an assembler with nothing buffered.
    public init() {}

    /// True while a partial line is buffered.
    public var hasPartialLine: Bool { !buffer.isEmpty }

    /// Adds bytes; returns the lines they completed (or cut), oldest first.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) -> [String] where Bytes.Element == UInt8 {
        var lines: [String] = []
        for byte in bytes {
            if byte == 0x0A {
                if discardingRest {
                    discardingRest = false
                } else {
                    if buffer.last == 0x0D { buffer.removeLast() }
                    lines.append(Self.render(buffer[...]))
                }
                buffer.removeAll(keepingCapacity: true)
                continue
            }
            if discardingRest { continue }
            buffer.append(byte)
            // One byte of slack for the `\r` of a `\r\n` ending right at the limit.
            if buffer.count > Self.maximumLineBytes + 1
                || (buffer.count == Self.maximumLineBytes + 1 && byte != 0x0D)
            {
                // Cut before a character boundary, never inside a UTF-8 sequence.
                var keep = Self.maximumLineBytes
                while keep > Self.maximumLineBytes - 3, buffer[keep] & 0xC0 == 0x80 { keep -= 1 }
                if buffer[keep] & 0xC0 == 0x80 { keep = Self.maximumLineBytes }
                lines.append(Self.render(buffer[..<keep]) + Self.cutMarker)
                buffer.removeAll(keepingCapacity: true)
                discardingRest = true
            }
        }
        return lines
    }

    /// At end of stream: the partial line still buffered, if any (then the assembler is empty).
    public mutating func finish() -> String? {
        defer {
            buffer.removeAll()
            discardingRest = false
        }
        guard !buffer.isEmpty else { return nil }
        return Self.render(buffer[...])
    }

    /// Decodes UTF-8, escaping invalid bytes and control characters as `\xNN`.
    public static func render(_ bytes: ArraySlice<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        let base = bytes.startIndex
        let count = bytes.count
        var index = 0
        func escape(_ byte: UInt8) {
            let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
            for character in "\\x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0xF)])".unicodeScalars {
                scalars.append(character)
            }
        }
        while index < count {
            let lead = bytes[base + index]
            if lead < 0x80 {
                if (lead < 0x20 && lead != 0x09) || lead == 0x7F {
                    escape(lead)
                } else {
                    scalars.append(Unicode.Scalar(lead))
                }
                index += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: length = 0
            }
            var valid = length > 0 && index + length <= count
            if valid {
                let second = bytes[base + index + 1]
                valid = second >= low && second <= high
                var offset = 2
                while valid && offset < length {
                    valid = bytes[base + index + offset] & 0xC0 == 0x80
                    offset += 1
                }
            }
            guard valid else {
                escape(lead)
                index += 1
                continue
            }
            var value = UInt32(lead) & (length == 2 ? 0x1F : (length == 3 ? 0x0F : 0x07))
            for offset in 1..<length { value = value << 6 | UInt32(bytes[base + index + offset] & 0x3F) }
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) } else { escape(lead) }
            index += length
        }
        return String(scalars)
    }
}
