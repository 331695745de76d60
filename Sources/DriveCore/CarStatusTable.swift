/// The car's status as its status lines told it (docs/protocol.md §7): the last value of each key and
/// when it came, in the order the keys first came. Bounded: a car sending ever new keys pushes out the
/// key heard from longest ago, so the table never holds more than `limit` keys.
public struct CarStatusTable: Hashable, Sendable {
    /// One key's last value.
    public struct Entry: Hashable, Sendable {
        /// The key, as sent.
        public var key: String
        /// The value, as sent.
        public var value: String
        /// The value as a number when it reads as one (`CarStatusLine.number`); nil for text.
        public var number: Double?
        /// When the value came.
        public var time: Instant

        /// An entry.
        public init(key: String, value: String, number: Double?, time: Instant) {
            self.key = key
            self.value = value
            self.number = number
            self.time = time
        }
    }

    /// The most keys kept.
    public static let defaultLimit = 32

    /// The most keys kept.
    public let limit: Int
    /// The keys and their last values, in the order the keys first came.
    public private(set) var entries: [Entry] = []

    /// An empty table keeping at most `limit` keys.
    public init(limit: Int = CarStatusTable.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// True when nothing was heard.
    public var isEmpty: Bool { entries.isEmpty }

    /// The entry for `key`, if any.
    public subscript(key: String) -> Entry? { entries.first { $0.key == key } }

    /// Takes in the pairs of `line`, heard at `time`.
    public mutating func update(_ line: CarStatusLine, at time: Instant) {
        for pair in line.pairs {
            let entry = Entry(key: pair.key, value: pair.value, number: pair.number, time: time)
            if let index = entries.firstIndex(where: { $0.key == pair.key }) {
                entries[index] = entry
                continue
            }
            if entries.count >= limit, let oldest = entries.indices.min(by: { entries[$0].time < entries[$1].time }) {
                entries.remove(at: oldest)
            }
            entries.append(entry)
        }
    }

    /// `BAT=7.42  RSSI=-60`: every key with its value, as the live view shows them.
    public var summary: String { entries.map { "\($0.key)=\($0.value)" }.joined(separator: "  ") }
}
