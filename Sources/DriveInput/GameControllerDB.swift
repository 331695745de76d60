import DriveSystem
import Glibc

/// A set of GameControllerDB mappings from one or more sources, looked up by a device's GUID the way
/// SDL does (`SDL_PrivateGetGamepadMappingForGUID`). Pure: the text is handed in.
///
/// Adding: a line whose GUID (CRC cleared) and name CRC equal an earlier line's replaces it, so later
/// sources (added last: the user's) win, as SDL's higher priorities do. Lookup, in SDL's order:
/// the same GUID and version with the line's CRC equal to the device's; then lines without a CRC; then
/// both again ignoring the version (only for GUIDs with a vendor and a product). Among equals, the
/// first line added wins.
public struct GameControllerDB: Sendable {
    /// Where a mapping came from.
    public enum Source: Hashable, Sendable, CustomStringConvertible {
        /// The DB built into carbridge (the community gamecontrollerdb.txt).
        case shipped
        /// `SDL_GAMECONTROLLERCONFIG` in the environment.
        case environment
        /// `[devices] mapping_db`: a file of the user's.
        case file(String)

        public var description: String {
            switch self {
            case .shipped: return "the built-in GameControllerDB"
            case .environment: return "SDL_GAMECONTROLLERCONFIG"
            case .file(let path): return path
            }
        }
    }

    /// A mapping and its source.
    public struct Entry: Hashable, Sendable {
        /// The parsed line.
        public var mapping: GameControllerMapping
        /// Where it came from.
        public var source: Source
        /// The line number in its source (1-based).
        public var line: Int
    }

    /// A line that could not be used.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// Where.
        public var source: Source
        /// The line number (1-based).
        public var line: Int
        /// What.
        public var error: GameControllerDBError

        public var description: String { "\(source):\(line): \(error)" }
    }

    /// Every entry, in the order added (a replaced line keeps its place).
    public private(set) var entries: [Entry] = []
    private var indexByKey: [Key: Int] = [:]

    /// An empty DB.
    public init() {}

    /// The text of a DB file (at most 16 MiB), or why it cannot be read.
    public static func readFile(_ path: String) -> Result<String, InputDeviceError> {
        guard SysfsFile.exists(path) else { return .failure(.notFound(path: path)) }
        guard let text = SysfsFile.readRaw(path, limit: 16 << 20) else {
            return .failure(.system(SystemError(call: "read \(path)", errno: errno)))
        }
        return .success(text)
    }

    private struct Key: Hashable {
        var guid: SDLJoystickGUID
        var crc: UInt16
    }

    /// Adds every mapping in `text` (one per line; `#` comments and blank lines skipped). Lines for another
    /// platform are skipped; from a file, SDL also skips lines without a `platform:` (`requirePlatform`),
    /// from the environment it takes them. Returns the lines that are not mappings.
    /// With `only`, just the lines whose GUID has that GUID's bus, vendor and product are parsed (the
    /// others could never match it): a pad's lookup in the 700-line built-in DB parses a handful.
    @discardableResult
    public mutating func add(
        text: String, source: Source, requirePlatform: Bool = true, only device: SDLJoystickGUID? = nil
    ) -> [Problem] {
        var problems: [Problem] = []
        let wanted: [UInt8]? = device.flatMap { $0.vendor != 0 ? Array($0.description.utf8) : nil }
        let lines: [(number: Int, text: Substring)]
        if let wanted, let candidates = Self.candidateLines(of: text, wanted: wanted) {
            lines = candidates
        } else {
            lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { ($0.offset + 1, $0.element) }
        }
        for (number, line) in lines {
            if let wanted, !Self.mayMatch(line.utf8, wanted) { continue }
            do {
                guard let mapping = try GameControllerMapping.parse(line: line) else { continue }
                if let platform = mapping.platform {
                    guard platform.lowercased() == "linux" else { continue }
                } else if requirePlatform {
                    continue
                }
                add(Entry(mapping: mapping, source: source, line: number))
            } catch {
                problems.append(Problem(source: source, line: number, error: error))
            }
        }
        return problems
    }

    /// The numbered lines of `text` that may match `wanted`, found with `memchr` over the text's bytes so
    /// the hundreds of other lines cost no allocation (nil when the text is not contiguous UTF-8).
    private static func candidateLines(of text: String, wanted: [UInt8]) -> [(number: Int, text: Substring)]? {
        var text = text
        return text.withUTF8 { bytes -> [(number: Int, text: Substring)] in
            guard let base = bytes.baseAddress else { return [] }
            var found: [(number: Int, text: Substring)] = []
            var start = 0
            var number = 1
            while start <= bytes.count {
                let end: Int
                if let newline = memchr(base + start, 0x0a, bytes.count - start) {
                    end = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                } else {
                    end = bytes.count
                }
                if end - start >= 20, (0..<20).allSatisfy({ offset in
                    let isIdentity = offset < 4 || (offset >= 8 && offset < 12) || offset >= 16
                    let byte = base[start + offset]
                    let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") ? byte + 32 : byte
                    return !isIdentity || lower == wanted[offset]
                }) {
                    let line = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                    found.append((number, Substring(line)))
                }
                number += 1
                start = end + 1
            }
            return found
        }
    }

    /// True when `line` starts with a GUID whose bus (hex digits 0–3), vendor (8–11) and product
    /// (16–19) are those of `wanted` (lower-case hex), in either case.
    private static func mayMatch(_ line: Substring.UTF8View, _ wanted: [UInt8]) -> Bool {
        var index = line.startIndex
        for offset in 0..<20 {
            guard index != line.endIndex else { return false }
            let byte = line[index]
            if offset < 4 || (offset >= 8 && offset < 12) || offset >= 16 {
                let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") ? byte + 32 : byte
                if lower != wanted[offset] { return false }
            }
            index = line.index(after: index)
        }
        return true
    }

    /// Adds one entry, replacing an earlier one with the same GUID and name CRC.
    public mutating func add(_ entry: Entry) {
        let key = Key(guid: entry.mapping.guid.with(crc: 0), crc: entry.mapping.nameCRC)
        if let index = indexByKey[key] {
            entries[index] = entry
        } else {
            indexByKey[key] = entries.count
            entries.append(entry)
        }
    }

    /// The entry SDL would pick for a device with `guid` (CRC included), or nil.
    public func entry(for guid: SDLJoystickGUID) -> Entry? {
        if let found = match(guid, matchVersion: true, exactCRC: true) { return found }
        if let found = match(guid, matchVersion: true, exactCRC: false) { return found }
        if guid.usesVersion {
            if let found = match(guid, matchVersion: false, exactCRC: true) { return found }
            if let found = match(guid, matchVersion: false, exactCRC: false) { return found }
        }
        return nil
    }

    /// `SDL_PrivateMatchGamepadMappingForGUID`.
    private func match(_ device: SDLJoystickGUID, matchVersion: Bool, exactCRC: Bool) -> Entry? {
        let crc = device.crc
        var wanted = device.with(crc: 0)
        if !matchVersion { wanted = wanted.with(version: 0) }
        var best: Entry?
        for entry in entries {
            var candidate = entry.mapping.guid.with(crc: 0)
            if candidate.bytes.allSatisfy({ $0 == 0 }) { continue }
            if !matchVersion { candidate = candidate.with(version: 0) }
            guard candidate == wanted else { continue }
            if entry.mapping.nameCRC != 0 {
                // This line is for one device name: only that name matches, and it is an exact match.
                if entry.mapping.nameCRC != crc { continue }
                return entry
            } else if crc != 0 && exactCRC {
                continue
            }
            if best == nil { best = entry }
        }
        return best
    }
}
