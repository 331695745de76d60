import DriveCore

/// What a browser may send over the dashboard's WebSocket: one small JSON object per text message.
///
/// ```
/// {"c":"engine"}  {"c":"speed_up"}  {"c":"speed_down"}  {"c":"gear"}
/// {"c":"f","n":3}          F1…F5
/// {"c":"steer","deg":-35}  θ in degrees (−90…90, positive right)
/// {"c":"ping"}             "still here" (a steering tab sends it every 250 ms)
/// {"c":"bt_scan"}          start the Bluetooth search (12 s, through bluetoothd)
/// {"c":"bt_pick","addr":"98:D3:31:F5:2A:11"}   save this car (from the search's results) as link.url
/// {"c":"tilt","beta":12.5,"gamma":-30,"angle":90,"hold":"wheel","seq":812}   a phone's raw orientation (tilt
///                          mode) and its page's count of sensor events (a count that did not move: a heartbeat)
/// {"c":"stick","x":0.2,"y":0.8,"form":"polar"}   a phone's thumb stick (x right, y forward; −1…1)
/// {"c":"straight"}         this phone's current tilt is straight ahead
/// {"c":"release"}          this tab stops driving (hidden, closed)
/// ```
///
/// Parsing is strict and pure: anything else — not JSON, nested values, unknown or repeated keys, a
/// missing field, a non-finite or out-of-range number, more than `maximumBytes` — is a `Rejection` with a
/// reason (sent back to the browser) and never becomes a `Control`.
public enum ClientMessage: Hashable, Sendable {
    /// A driver's control for the machine (never a safety event: those come from the server itself).
    case control(Control)
    /// Keep-alive from a tab (it may be steering).
    case ping
    /// Start a Bluetooth search (`bt_scan`).
    case bluetoothScan
    /// Save the car at this address (`AA:BB:CC:DD:EE:FF`, upper case) as the link (`bt_pick`).
    case bluetoothPick(address: String)
    /// A phone's orientation in tilt mode (`tilt`).
    case tilt(PhoneTiltReading)
    /// A phone's thumb stick (`stick`).
    case stick(PhoneStickReading)
    /// Make this phone's current tilt straight ahead (`straight`).
    case straight
    /// The tab stops driving: hidden or closed (`release`).
    case release

    /// The longest message accepted (bytes of UTF-8). Longer ones are rejected with a reason; the
    /// WebSocket layer closes the connection (1009) on anything over `frameLimit`.
    public static let maximumBytes = 256
    /// The largest `seq` of a tilt report: JavaScript's largest exact integer (a page never gets near it).
    public static let maximumSequence: Double = 9_007_199_254_740_991
    /// The WebSocket frame/message limit (16 KiB), above which the connection is closed (1009, or a
    /// reset when the unread rest of the message is still arriving).
    public static let frameLimit = 16384

    /// Why a message was refused.
    public struct Rejection: Error, Hashable, Sendable, CustomStringConvertible {
        /// The reason, for the browser and the log.
        public var reason: String
        /// Creates a rejection.
        public init(_ reason: String) { self.reason = reason }
        /// The reason.
        public var description: String { reason }
    }

    /// Parses one text message.
    public static func parse(_ text: String) throws(Rejection) -> ClientMessage {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumBytes else {
            throw Rejection("message too long (\(bytes.count) bytes; at most \(maximumBytes))")
        }
        var parser = FlatJSONParser(bytes: bytes)
        let fields: [String: FlatJSONParser.Value]
        do {
            fields = try parser.parseObject()
        } catch {
            throw Rejection("not a flat JSON object: \(error.reason)")
        }
        guard case .string(let name)? = fields["c"] else {
            throw Rejection("missing \"c\" (the control's name)")
        }
        func only(_ keys: Set<String>) throws(Rejection) {
            if let extra = fields.keys.sorted().first(where: { !keys.contains($0) }) {
                throw Rejection("unexpected key \"\(extra)\" for \"\(name)\"")
            }
        }
        func number(_ key: String) throws(Rejection) -> Double {
            guard let value = fields[key] else { throw Rejection("\"\(name)\" needs \"\(key)\"") }
            guard case .number(let number) = value, number.isFinite else {
                throw Rejection("\"\(key)\" must be a finite number")
            }
            return number
        }
        func choice<Choice: RawRepresentable<String>>(_ key: String, _ type: Choice.Type, _ names: String) throws(Rejection) -> Choice {
            guard case .string(let text)? = fields[key], let value = Choice(rawValue: text) else {
                throw Rejection("\"\(key)\" must be one of \(names)")
            }
            return value
        }
        func within(_ key: String, _ range: ClosedRange<Double>, _ words: String) throws(Rejection) -> Double {
            let value = try number(key)
            guard range.contains(value) else { throw Rejection("\"\(key)\" must be within \(words)") }
            return value
        }
        switch name {
        case "engine", "speed_up", "speed_down", "gear", "ping", "bt_scan", "straight", "release":
            try only(["c"])
            switch name {
            case "engine": return .control(.engine)
            case "speed_up": return .control(.speedUp)
            case "speed_down": return .control(.speedDown)
            case "gear": return .control(.gear)
            case "bt_scan": return .bluetoothScan
            case "straight": return .straight
            case "release": return .release
            default: return .ping
            }
        case "tilt":
            try only(["c", "beta", "gamma", "angle", "hold", "seq"])
            let beta = try within("beta", -180...180, "−180…180")
            let gamma = try within("gamma", -90...90, "−90…90")
            let angle = try number("angle")
            guard [0, 90, 180, 270, -90].contains(angle) else { throw Rejection("\"angle\" must be 0, 90, 180, 270 or −90") }
            let hold = try choice("hold", PhoneTiltReading.Hold.self, "\"wheel\", \"flat\"")
            let sequence = try number("seq")
            guard sequence == sequence.rounded(), (0...maximumSequence).contains(sequence) else {
                throw Rejection("\"seq\" must be a whole number 0…\(Int(maximumSequence)) (the page's count of sensor events)")
            }
            return .tilt(PhoneTiltReading(beta: beta, gamma: gamma, screenAngle: Int(angle), hold: hold, sequence: Int(sequence)))
        case "stick":
            try only(["c", "x", "y", "form"])
            let x = try within("x", -1...1, "−1…1")
            let y = try within("y", -1...1, "−1…1")
            let form = try choice("form", PhoneStickReading.Form.self, "\"polar\", \"xy\"")
            return .stick(PhoneStickReading(x: x, y: y, form: form))
        case "bt_pick":
            try only(["c", "addr"])
            guard let value = fields["addr"] else { throw Rejection("\"bt_pick\" needs \"addr\"") }
            guard case .string(let text) = value, let address = bluetoothAddress(text) else {
                throw Rejection("\"addr\" must be a Bluetooth address like 98:D3:31:F5:2A:11")
            }
            return .bluetoothPick(address: address)
        case "f":
            try only(["c", "n"])
            let n = try number("n")
            guard n == n.rounded(), (1...5).contains(n) else { throw Rejection("\"n\" must be 1…5 (F1–F5)") }
            return .control(.function(Int(n)))
        case "steer":
            try only(["c", "deg"])
            let degrees = try number("deg")
            guard (-90...90).contains(degrees) else { throw Rejection("\"deg\" must be within −90…90") }
            return .control(.steer(degrees))
        default:
            throw Rejection("unknown control \"\(name.prefix(32))\"")
        }
    }
}

extension ClientMessage {
    /// `text` as a Bluetooth address in upper case (`AA:BB:CC:DD:EE:FF`: six pairs of hex digits
    /// separated by colons, nothing else), or nil.
    public static func bluetoothAddress(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 17 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if index % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return nil }
            } else {
                let hex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                guard hex else { return nil }
            }
        }
        return text.uppercased()
    }
}

/// A minimal JSON reader for one flat object of string and number values (no nesting), with reasons.
struct FlatJSONParser {
    enum Value: Hashable {
        case string(String)
        case number(Double)
    }

    struct Failure: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private let bytes: [UInt8]
    private var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseObject() throws(Failure) -> [String: Value] {
        skipSpace()
        try expect(UInt8(ascii: "{"))
        var fields: [String: Value] = [:]
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                let key = try parseString()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                let value = try parseValue()
                guard fields[key] == nil else { throw Failure("key \"\(key.prefix(32))\" appears twice") }
                fields[key] = value
                skipSpace()
                guard let next = peek() else { throw Failure("unterminated object") }
                index += 1
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { throw Failure("expected , or } at byte \(index - 1)") }
            }
        }
        skipSpace()
        guard index == bytes.count else { throw Failure("trailing bytes after the object") }
        return fields
    }

    private mutating func parseValue() throws(Failure) -> Value {
        guard let first = peek() else { throw Failure("missing value") }
        switch first {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "{"), UInt8(ascii: "["): throw Failure("nested objects and arrays are not accepted")
        default: throw Failure("values must be strings or numbers")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        var out: [UInt8] = []
        while let byte = peek() {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = peek() else { throw Failure("unterminated escape") }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "t"): out.append(9)
                default: throw Failure("unsupported escape \\\(Character(UnicodeScalar(escaped)))")
                }
            case 0..<0x20:
                throw Failure("control character in a string")
            default:
                out.append(byte)
            }
        }
        throw Failure("unterminated string")
    }

    private mutating func parseNumber() throws(Failure) -> Double {
        let start = index
        while let byte = peek(),
            byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        {
            index += 1
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard text.count <= 24, let value = Double(text) else { throw Failure("bad number \"\(text.prefix(24))\"") }
        return value
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else {
            throw Failure("expected \(Character(UnicodeScalar(byte))) at byte \(index)")
        }
        index += 1
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }
}
