/// A status line from the car (docs/protocol.md §7): one or more `KEY=VALUE` pairs separated by `;`,
/// e.g. `BAT=7.42;RSSI=-60`. Any other line is an ordinary car line, shown as it came.
///
/// KEY is a letter then up to 15 letters, digits or `_`; VALUE is 1 to 32 printable ASCII characters
/// without `;`; at most 16 pairs. The limits keep what one line can put into the status table small.
public struct CarStatusLine: Hashable, Sendable {
    /// One `KEY=VALUE` pair.
    public struct Pair: Hashable, Sendable {
        /// The key, as sent (case kept).
        public var key: String
        /// The value, as sent.
        public var value: String

        /// A pair.
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }

        /// The value as a number when it reads as a finite decimal (`7.42`, `-3`, `95`); nil for text.
        public var number: Double? { CarStatusLine.number(value) }
    }

    /// The longest key.
    public static let maxKeyLength = 16
    /// The longest value.
    public static let maxValueLength = 32
    /// The most pairs on one line.
    public static let maxPairs = 16

    /// The pairs, in the order the car sent them.
    public var pairs: [Pair]

    /// Parses `text` (a car line without its terminator); nil when it is not a status line.
    public init?(_ text: String) {
        // Most car lines fail on their first byte or their length, before anything is copied. A line
        // longer than the most pairs at their longest (`KEY=VALUE;` each) cannot be one.
        let longest = Self.maxPairs * (Self.maxKeyLength + Self.maxValueLength + 2)
        guard let first = text.utf8.first, Self.isLetter(first), text.utf8.count < longest else { return nil }
        let bytes = Array(text.utf8)
        var pairs: [Pair] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: ";") { end += 1 }
            guard pairs.count < Self.maxPairs, let pair = Self.pair(bytes[start..<end]) else { return nil }
            pairs.append(pair)
            start = end + 1
        }
        self.pairs = pairs
    }

    /// One `KEY=VALUE`, or nil.
    private static func pair(_ bytes: ArraySlice<UInt8>) -> Pair? {
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let key = bytes[bytes.startIndex..<equals]
        let value = bytes[(equals + 1)...]
        guard let head = key.first, isLetter(head), key.count <= maxKeyLength,
            key.allSatisfy({ isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") }),
            !value.isEmpty, value.count <= maxValueLength,
            value.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        else { return nil }
        return Pair(key: String(decoding: key, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// `text` as a finite number: an optional sign, digits, an optional fraction (no exponent, no
    /// `inf`/`nan`, no spaces); nil otherwise.
    public static func number(_ text: String) -> Double? {
        var digits = 0
        var dots = 0
        for (index, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: "+"): if index != 0 { return nil }
            case UInt8(ascii: "."): dots += 1
            case 0x30...0x39: digits += 1
            default: return nil
            }
        }
        guard digits > 0, dots <= 1, let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
