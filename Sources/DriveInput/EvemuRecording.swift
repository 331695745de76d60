import DriveInputModel
import DriveSystem
import Glibc

/// A device description and its events in evemu's text format, as `evemu-record` writes it:
///
///     # EVEMU 1.3
///     N: Microsoft X-Box 360 pad
///     I: 0003 045e 028e 0114                 (bustype vendor product version, hex)
///     P: 00 00 00 00 00 00 00 00             (INPUT_PROP bits, 8 hex bytes per line)
///     B: 01 00 00 00 00 00 00 00 00          (event type, then 8 hex bytes of its code bits per line)
///     A: 00 -32768 32767 16 128 0            (axis code hex; min max fuzz flat [resolution] decimal)
///     E: 0.000001 0003 0000 -1234   # …      (sec.usec, type and code hex, value decimal)
///
/// `#` starts a comment anywhere except in the `N:` line. `L:`/`S:` (LED and switch states) are accepted.
public struct EvemuRecording: Hashable, Sendable {
    /// The format version from a leading `# EVEMU x.y` line, if present.
    public var formatVersion: String?
    /// The device: name, ids, properties, keys and axes from the header.
    public var info: InputDeviceInfo
    /// Every supported code per event type (from the `B:` lines).
    public var supportedCodes: [UInt16: Set<UInt16>]
    /// The events, in file order.
    public var events: [InputEvent]
    /// The 1-based line number of each event.
    public var eventLines: [Int]

    /// Creates a recording directly.
    public init(
        formatVersion: String? = nil, info: InputDeviceInfo, supportedCodes: [UInt16: Set<UInt16>] = [:],
        events: [InputEvent] = [], eventLines: [Int] = []
    ) {
        self.formatVersion = formatVersion
        self.info = info
        self.supportedCodes = supportedCodes
        self.events = events
        self.eventLines = eventLines
    }

    /// Reads and parses the file at `path`; throws `EvemuError` (with `file` set) or `InputDeviceError`.
    public init(contentsOfFile path: String) throws {
        guard SysfsFile.exists(path) else { throw InputDeviceError.notFound(path: path) }
        guard let text = SysfsFile.readRaw(path) else {
            throw InputDeviceError.system(SystemError(call: "read \(path)", errno: errno))
        }
        do {
            self = try Self.parse(text)
        } catch var error as EvemuError {
            error.file = path
            throw error
        }
    }

    /// The time of the last event relative to the first, in microseconds (0 without events).
    public var durationMicroseconds: Int64 {
        guard let first = events.first, let last = events.last else { return 0 }
        return max(0, EvemuPlayer.microseconds(from: first, to: last))
    }

    private enum Section: Int, Comparable {
        case start, name, id, header, events
        static func < (lhs: Section, rhs: Section) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Parses evemu text; malformed input throws `EvemuError` with the line number and what was expected.
    ///
    /// Works on the UTF-8 bytes: lines end at `\n` (a `\r` before it, and one more at the end of the line,
    /// are dropped, as `"\r\n"` is one `Character`), and an ASCII `E:` line, nearly all of a recording, is
    /// parsed without building a `String`. The header and any line with non-ASCII bytes go through
    /// `Substring`s, so the results and messages are those of `parseByCharacters` exactly.
    public static func parse(_ text: String) throws -> EvemuRecording {
        var text = text
        return try text.withUTF8 { try parse(utf8: $0) }
    }

    /// Parses evemu text given as UTF-8 bytes (see `parse(_:)`); invalid UTF-8 is read as `String(decoding:)` would.
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) throws -> EvemuRecording {
        var parser = LineParser()
        parser.recording.events.reserveCapacity(bytes.count / 40)
        parser.recording.eventLines.reserveCapacity(bytes.count / 40)
        var lineNumber = 0
        var start = 0
        let count = bytes.count
        while true {
            lineNumber += 1
            var end = count
            if start < count, let newline = memchr(bytes.baseAddress! + start, 0x0A, count - start) {
                end = bytes.baseAddress!.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            }
            let atEnd = end == count
            var lineEnd = end
            // "\r\n" ends a line like "\n"; then one "\r" left at the end of the line is dropped.
            if !atEnd, lineEnd > start, bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            if lineEnd > start, bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            try parser.line(UnsafeBufferPointer(rebasing: bytes[start..<lineEnd]), number: lineNumber)
            if atEnd { break }
            start = end + 1
        }
        // Like the Character-based split, the loop counts an empty last line after a final line end.
        let endsWithNewline = count > 0 && bytes[count - 1] == UInt8(ascii: "\n")
        let end = count == 0 ? 1 : (endsWithNewline ? lineNumber : lineNumber + 1)
        return try parser.finish(endLine: end)
    }

    /// The state of one parse, fed line by line.
    private struct LineParser {
        var recording = EvemuRecording(info: InputDeviceInfo(name: ""))
        var section = Section.start
        var propertyBytes = 0
        var maskBytes: [UInt16: Int] = [:]

        /// One line, without its line end.
        mutating func line(_ bytes: UnsafeBufferPointer<UInt8>, number: Int) throws {
            // The fast path: an ASCII event line once the header has begun (bytes and Characters agree on ASCII).
            if section >= .id, bytes.count >= 2, bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: ":"),
                Self.isASCII(bytes)
            {
                return try eventLine(bytes, number: number)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            try self.line(Substring(text), number: number)
        }

        /// True when no byte has its high bit set (eight at a time).
        static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            let raw = UnsafeRawBufferPointer(bytes)
            var index = 0
            var high: UInt64 = 0
            while index + 8 <= raw.count {
                high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < raw.count {
                high |= UInt64(raw[index])
                index += 1
            }
            return high & 0x8080_8080_8080_8080 == 0
        }

        /// An ASCII `E:` line: the same checks, results and messages as the `Substring` path.
        mutating func eventLine(_ bytes: UnsafeBufferPointer<UInt8>, number: Int) throws {
            section = .events
            var contentEnd = bytes.count
            if let hash = memchr(bytes.baseAddress!, 0x23, bytes.count) {
                contentEnd = bytes.baseAddress!.distance(to: hash.assumingMemoryBound(to: UInt8.self))
            }
            // Up to four fields (a fifth means a malformed line), split at spaces and tabs.
            var fields: (Range<Int>, Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0, 0..<0)
            var fieldCount = 0
            var index = 2
            while index < contentEnd {
                let byte = bytes[index]
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    index += 1
                    continue
                }
                var fieldEnd = index + 1
                while fieldEnd < contentEnd, bytes[fieldEnd] != UInt8(ascii: " "), bytes[fieldEnd] != UInt8(ascii: "\t") {
                    fieldEnd += 1
                }
                switch fieldCount {
                case 0: fields.0 = index..<fieldEnd
                case 1: fields.1 = index..<fieldEnd
                case 2: fields.2 = index..<fieldEnd
                case 3: fields.3 = index..<fieldEnd
                default: break
                }
                fieldCount += 1
                index = fieldEnd
            }
            guard fieldCount == 4, let event = Self.event(bytes, fields.0, fields.1, fields.2, fields.3) else {
                throw EvemuError(line: number, message: "expected \"E: <sec>.<usec> <type (hex)> <code (hex)> <value>\", got \"\(String(decoding: bytes, as: UTF8.self))\"")
            }
            guard event.seconds <= maximumSeconds else {
                let field = String(decoding: UnsafeBufferPointer(rebasing: bytes[fields.0]), as: UTF8.self)
                throw EvemuError(line: number, message: "the timestamp \(field) is too large (at most \(maximumSeconds) seconds), in \"\(String(decoding: bytes, as: UTF8.self))\"")
            }
            recording.events.append(event)
            recording.eventLines.append(number)
        }

        /// `parseEvent` on byte ranges: `<digits>.<1…6 digits>`, hex type and code, a decimal value.
        static func event(
            _ bytes: UnsafeBufferPointer<UInt8>, _ time: Range<Int>, _ type: Range<Int>, _ code: Range<Int>, _ value: Range<Int>
        ) -> InputEvent? {
            guard let dot = bytes[time].firstIndex(of: UInt8(ascii: ".")) else { return nil }
            let secondsRange = time.lowerBound..<dot
            let microsecondsRange = (dot + 1)..<time.upperBound
            guard !secondsRange.isEmpty, !microsecondsRange.isEmpty, microsecondsRange.count <= 6,
                let seconds = decimalDigits(bytes, secondsRange), let microseconds = decimalDigits(bytes, microsecondsRange),
                let type = hex16(bytes, type), let code = hex16(bytes, code), let value = decimal32(bytes, value)
            else { return nil }
            return InputEvent(seconds: seconds, microseconds: microseconds, type: type, code: code, value: value)
        }

        /// Only ASCII digits (a second "." fails here too), as an `Int64`; nil on overflow.
        static func decimalDigits(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
            var result: Int64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit))
                if overflow1 || overflow2 { return nil }
                result = sum
            }
            return result
        }

        /// `UInt16(field, radix: 16)`: plain hex digits here; a field with a sign goes to the standard library.
        static func hex16(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt16? {
            let first = bytes[range.lowerBound]
            if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                return UInt16(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self), radix: 16)
            }
            var result: UInt32 = 0
            for index in range {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte &- UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte &- UInt8(ascii: "a") &+ 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte &- UInt8(ascii: "A") &+ 10)
                default: return nil
                }
                result = result &* 16 &+ digit
                if result > UInt32(UInt16.max) { return nil }
            }
            return UInt16(result)
        }

        /// `Int32(field)`: plain decimal digits here; a field with a sign goes to the standard library.
        static func decimal32(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int32? {
            let first = bytes[range.lowerBound]
            if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                return Int32(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
            }
            var result: Int64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                result = result &* 10 &+ Int64(digit)
                if result > Int64(Int32.max) { return nil }
            }
            return Int32(result)
        }

        /// Any other line (the header, comments, blank lines, non-ASCII text) on `Character`s, as before.
        mutating func line(_ line: Substring, number: Int) throws {
            if line.hasPrefix("#") {
                if number == 1, line.hasPrefix("# EVEMU ") {
                    recording.formatVersion = String(line.dropFirst(8)).trimmingWhitespace()
                }
                return
            }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return }
            let prefix = line.prefix(2)

            if section == .start {
                guard prefix == "N:" else {
                    throw EvemuError(line: number, message: "expected \"N: <device name>\" (the evemu-record header), got \"\(line)\"")
                }
                let name = String(line.dropFirst(2)).trimmingWhitespace()
                guard !name.isEmpty else {
                    throw EvemuError(line: number, message: "expected a device name after \"N:\"")
                }
                recording.info.name = name
                section = .name
                return
            }

            // Everything but the name may carry a trailing comment.
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.dropFirst(2).split(whereSeparator: { $0 == " " || $0 == "\t" })

            if section == .name {
                guard prefix == "I:" else {
                    throw EvemuError(line: number, message: "expected \"I: <bustype> <vendor> <product> <version>\" (hex) after the name, got \"\(line)\"")
                }
                let ids = fields.compactMap { UInt16($0, radix: 16) }
                guard fields.count == 4, ids.count == 4 else {
                    throw EvemuError(line: number, message: "expected \"I: <bustype> <vendor> <product> <version>\" as four hex numbers, got \"\(line)\"")
                }
                recording.info.bustype = ids[0]
                recording.info.vendor = ids[1]
                recording.info.product = ids[2]
                recording.info.version = ids[3]
                section = .id
                return
            }

            switch prefix {
            case "P:", "B:", "A:", "L:", "S:":
                if section == .events {
                    throw EvemuError(line: number, message: "expected an \"E: <sec>.<usec> <type> <code> <value>\" line, got a header line \"\(line)\" after the events began")
                }
                section = .header
                switch prefix {
                case "P:":
                    let bytes = fields.compactMap { UInt8($0, radix: 16) }
                    guard fields.count == 8, bytes.count == 8 else {
                        throw EvemuError(line: number, message: "expected \"P:\" with 8 hex bytes of INPUT_PROP bits, got \"\(line)\"")
                    }
                    for bit in setBits(bytes, firstBit: propertyBytes * 8) { recording.info.properties.insert(bit) }
                    propertyBytes += 8
                case "B:":
                    let numbers = fields.compactMap { UInt8($0, radix: 16) }
                    guard fields.count == 9, numbers.count == 9, numbers[0] < 0x20 else {
                        throw EvemuError(line: number, message: "expected \"B: <type> <8 hex bytes>\" (an event type below 0x20 and its code bits), got \"\(line)\"")
                    }
                    let type = UInt16(numbers[0])
                    let offset = maskBytes[type, default: 0]
                    let codes = setBits(Array(numbers[1...]), firstBit: offset * 8)
                    recording.supportedCodes[type, default: []].formUnion(codes)
                    if type == EvdevCode.evKey { recording.info.keys.formUnion(codes) }
                    maskBytes[type] = offset + 8
                case "A:":
                    let code = fields.first.flatMap { UInt16($0, radix: 16) }
                    let numbers = fields.dropFirst().compactMap { Int32($0) }
                    guard let code, code <= EvdevCode.absMax, fields.count == 5 || fields.count == 6,
                        numbers.count == fields.count - 1
                    else {
                        throw EvemuError(line: number, message: "expected \"A: <code (hex)> <min> <max> <fuzz> <flat> [<resolution>]\", got \"\(line)\"")
                    }
                    recording.info.axes[code] = AbsInfo(
                        minimum: numbers[0], maximum: numbers[1], fuzz: numbers[2], flat: numbers[3],
                        resolution: numbers.count > 4 ? numbers[4] : 0)
                default:
                    guard fields.count == 2, UInt16(fields[0], radix: 16) != nil, Int32(fields[1]) != nil else {
                        throw EvemuError(line: number, message: "expected \"\(prefix) <code (hex)> <state>\", got \"\(line)\"")
                    }
                }
            case "E:":
                section = .events
                guard fields.count == 4, let event = parseEvent(fields) else {
                    throw EvemuError(line: number, message: "expected \"E: <sec>.<usec> <type (hex)> <code (hex)> <value>\", got \"\(line)\"")
                }
                guard event.seconds <= maximumSeconds else {
                    throw EvemuError(line: number, message: "the timestamp \(fields[0]) is too large (at most \(maximumSeconds) seconds), in \"\(line)\"")
                }
                recording.events.append(event)
                recording.eventLines.append(number)
            default:
                throw EvemuError(line: number, message: "expected a line starting with P:, B:, A:, L:, S: or E:, got \"\(line)\"")
            }
        }

        /// The end of the text at line `endLine`: a missing name or id line is an error.
        func finish(endLine end: Int) throws -> EvemuRecording {
            switch section {
            case .start:
                throw EvemuError(line: max(1, end), message: "expected \"N: <device name>\" but the file ends (empty or only comments)")
            case .name:
                throw EvemuError(line: end, message: "expected \"I: <bustype> <vendor> <product> <version>\" but the file ends (truncated header)")
            default:
                return recording
            }
        }
    }

    /// The former parser's path, on `Character`s for every line (no byte fast path): the reference `parse`
    /// is tested against (same recording, same errors). Shares `LineParser`'s per-line rules, so what it
    /// checks is the byte-level line splitting and the `E:` fast path. About 10× slower; not used by
    /// carbridge itself.
    public static func parseByCharacters(_ text: String) throws -> EvemuRecording {
        var parser = LineParser()
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on both line ends.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for rawLine in lines {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            try parser.line(line, number: lineNumber)
        }
        let endsWithNewline = text.last == "\n" || text.last == "\r\n"
        let end = text.isEmpty ? 1 : (endsWithNewline ? lineNumber : lineNumber + 1)
        return try parser.finish(endLine: end)
    }

    private static func setBits(_ bytes: [UInt8], firstBit: Int) -> Set<UInt16> {
        var bits: Set<UInt16> = []
        for (index, byte) in bytes.enumerated() {
            for bit in 0..<8 where byte & (1 << bit) != 0 {
                let number = firstBit + index * 8 + bit
                if number <= Int(UInt16.max) { bits.insert(UInt16(number)) }
            }
        }
        return bits
    }

    /// The largest `E:` seconds whose timestamp in microseconds fits an `Int64` (`InputEvent.timeMicroseconds`):
    /// about 292 000 years; anything above is rejected as malformed instead of wrapping around.
    public static let maximumSeconds: Int64 = (Int64.max - 999_999) / 1_000_000

    private static func parseEvent(_ fields: [Substring]) -> InputEvent? {
        let time = fields[0].split(separator: ".", omittingEmptySubsequences: false)
        guard time.count == 2, !time[0].isEmpty, !time[1].isEmpty, time[1].count <= 6,
            time[0].allSatisfy(\.isASCIIDigit), time[1].allSatisfy(\.isASCIIDigit),
            let seconds = Int64(time[0]), let microseconds = Int64(time[1]),
            let type = UInt16(fields[1], radix: 16), let code = UInt16(fields[2], radix: 16),
            let value = Int32(fields[3])
        else { return nil }
        return InputEvent(seconds: seconds, microseconds: microseconds, type: type, code: code, value: value)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
