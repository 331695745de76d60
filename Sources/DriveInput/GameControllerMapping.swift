/// One GameControllerDB line (SDL's mapping string): the pad's GUID and name, and which of its SDL
/// buttons (`b3`), axes (`a1`, `+a2`, `-a1`, `a3~`) and hat bits (`h0.4`) give each element of the
/// standard layout (`a`, `start`, `leftx`, `dpup`, …).
///
/// The line `030000005e0400008e02000010010000,Xbox 360 Controller,a:b0,…,leftx:a0,…,platform:Linux,`
/// parses to its GUID, name, the bindings in line order, `platform` and, when present, `crc`.
/// Elements SDL knows but carbridge has no use for (`misc1`, `paddle1`, `touchpad`, …) are kept as
/// bindings too, so `carbridge devices` can count them; unknown fields (`hint:`, `sdk>=:`) are skipped.
public struct GameControllerMapping: Hashable, Sendable {
    /// The GUID as written (SDL clears its CRC word when the line is added: see `key`).
    public var guid: SDLJoystickGUID
    /// The pad's name in the DB.
    public var name: String
    /// The CRC-16 of the device name this line is for: the GUID's CRC word, else the `crc:` field; 0 = any.
    public var nameCRC: UInt16
    /// `platform:` (e.g. `Linux`), if the line has one.
    public var platform: String?
    /// The element bindings, in line order.
    public var bindings: [Binding]

    /// One `element:input` field.
    public struct Binding: Hashable, Sendable {
        /// The standard element (SDL's name: `a`, `leftx`, …).
        public var element: StandardElement
        /// For an axis element, `+leftx`/`-leftx`: only that half of the output is driven.
        public var outputHalf: AxisHalf?
        /// The pad's input.
        public var input: Input
    }

    /// Which half of an axis.
    public enum AxisHalf: Hashable, Sendable {
        case positive
        case negative
    }

    /// An SDL input of the pad, by SDL index.
    public enum Input: Hashable, Sendable {
        /// `bN`: SDL button N.
        case button(Int)
        /// `aN`, `+aN`, `-aN`, `aN~`: SDL axis N, the whole range or one half, possibly inverted.
        case axis(Int, half: AxisHalf?, inverted: Bool)
        /// `hN.M`: SDL hat N, mask M (1 up, 2 right, 4 down, 8 left).
        case hat(Int, mask: Int)
    }

    /// Parses one line; nil for blank lines and `#` comments. A line that is not a mapping is a
    /// `GameControllerDBError` naming what is wrong.
    public static func parse(line rawLine: some StringProtocol) throws(GameControllerDBError) -> GameControllerMapping? {
        let line = Substring(rawLine).drop { $0 == " " || $0 == "\t" }
        if line.isEmpty || line.first == "#" || line.allSatisfy({ $0 == "\r" || $0 == " " }) { return nil }
        var fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingSuffix { $0 == "\r" || $0 == " " }
        }
        guard fields.count >= 2 else { throw GameControllerDBError.notAMapping("no name after the GUID") }
        guard let guid = SDLJoystickGUID(hex: fields[0]) else {
            throw GameControllerDBError.notAMapping("\"\(fields[0])\" is not a 32-digit hex GUID")
        }
        let name = String(fields[1])
        fields.removeFirst(2)
        var mapping = GameControllerMapping(guid: guid, name: name, nameCRC: guid.crc, platform: nil, bindings: [])
        for field in fields where !field.isEmpty {
            guard let colon = field.firstIndex(of: ":") else {
                throw GameControllerDBError.notAMapping("field \"\(field)\" has no ':'")
            }
            var target = field[..<colon]
            let source = field[field.index(after: colon)...]
            switch target {
            case "platform":
                mapping.platform = String(source)
                continue
            case "crc":
                if mapping.nameCRC == 0, let crc = UInt16(source, radix: 16) { mapping.nameCRC = crc }
                continue
            default:
                break
            }
            var outputHalf: AxisHalf?
            if let sign = target.first, sign == "+" || sign == "-" {
                outputHalf = sign == "+" ? .positive : .negative
                target = target.dropFirst()
            }
            guard let element = StandardElement(rawValue: String(target)) else { continue }
            guard let input = parseInput(source) else {
                throw GameControllerDBError.notAMapping("\"\(field)\": \"\(source)\" is not bN, aN (+aN, -aN, aN~) or hN.M")
            }
            mapping.bindings.append(Binding(element: element, outputHalf: outputHalf, input: input))
        }
        return mapping
    }

    /// SDL's `SDL_PrivateParseGamepadElement`, the input half.
    private static func parseInput(_ text: Substring) -> Input? {
        var text = text
        var half: AxisHalf?
        if let sign = text.first, sign == "+" || sign == "-" {
            half = sign == "+" ? .positive : .negative
            text = text.dropFirst()
        }
        let inverted = text.last == "~"
        if inverted { text = text.dropLast() }
        guard let kind = text.first else { return nil }
        let rest = text.dropFirst()
        switch kind {
        case "a":
            guard let index = Int(rest), index >= 0 else { return nil }
            return .axis(index, half: half, inverted: inverted)
        case "b":
            guard let index = Int(rest), index >= 0, half == nil else { return nil }
            return .button(index)
        case "h":
            let parts = rest.split(separator: ".")
            guard half == nil, parts.count == 2, let hat = Int(parts[0]), let mask = Int(parts[1]), hat >= 0 else { return nil }
            return .hat(hat, mask: mask)
        default:
            return nil
        }
    }
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var result = self
        while let last = result.last, predicate(last) { result = result.dropLast() }
        return result
    }
}

/// A problem with a GameControllerDB line or file.
public enum GameControllerDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line is not `GUID,name,element:input,…`.
    case notAMapping(String)

    public var description: String {
        switch self {
        case .notAMapping(let reason): return "not a GameControllerDB mapping: \(reason)"
        }
    }
}
