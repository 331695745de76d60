/// Parses one frame line strictly, the way a careful car would (docs/protocol.md §2).
///
/// Grammar: `T,A,S,D` with T one of `M L R B X Y F G H I J E`; integers without `+`, spaces or
/// leading zeros (`-0` is invalid); A in −2…2; S in 0…240 and a multiple of 10; D 0 or 1; a motion
/// T must match D and the sign of A; `E` is exactly `E,0,0,0`.
public enum CarFrameParser {
    /// Parses `line` (without its terminator) into a frame, or says exactly what is wrong.
    public static func parse(_ line: String) -> Result<Frame, CarFrameError> {
        func fail(_ reason: String) -> Result<Frame, CarFrameError> {
            .failure(CarFrameError(line: line, reason: reason))
        }
        if line.isEmpty { return fail("empty line (expected T,A,S,D such as M,0,40,1)") }
        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 4 else {
            return fail("expected 4 fields T,A,S,D separated by commas, got \(fields.count)")
        }
        let letters = Frame.Kind.allCases.map { String($0.rawValue) }.joined(separator: " ")
        guard fields[0].count == 1, let letter = fields[0].first, let kind = Frame.Kind(rawValue: letter) else {
            return fail("unknown command type \"\(fields[0])\" (expected one of \(letters))")
        }
        guard let range = plainInteger(fields[1]) else {
            return fail("angle range \"\(fields[1])\" is not a plain integer (no '+', spaces or leading zeros)")
        }
        guard let speed = plainInteger(fields[2]) else {
            return fail("speed \"\(fields[2])\" is not a plain integer (no '+', spaces or leading zeros)")
        }
        guard let direction = plainInteger(fields[3]) else {
            return fail("direction \"\(fields[3])\" is not a plain integer (no '+', spaces or leading zeros)")
        }
        if kind == .engineOff {
            if range != 0 || speed != 0 || direction != 0 {
                return fail("an engine-off frame must be exactly E,0,0,0")
            }
            return .success(.engineOff)
        }
        guard (-2...2).contains(range) else { return fail("angle range \(range) is outside -2…2") }
        guard (0...240).contains(speed) else { return fail("speed \(speed) is outside 0…240") }
        guard speed % 10 == 0 else { return fail("speed \(speed) is not a multiple of 10") }
        guard direction == 0 || direction == 1 else {
            return fail("direction \(direction) is neither 1 (forward) nor 0 (reverse)")
        }
        if kind.isMotion {
            let expected = Frame.Kind.motion(direction: direction, range: range)
            if expected != kind {
                return fail(
                    "type \(kind.rawValue) does not match D=\(direction), A=\(range): "
                        + "that state is \(expected.rawValue) (\(CarModel.motionName(expected)))")
            }
        }
        return .success(Frame(kind: kind, range: range, speed: speed, direction: direction))
    }

    /// Parses `line`, throwing `CarFrameError` when it is not a valid frame.
    public static func frame(from line: String) throws(CarFrameError) -> Frame {
        try parse(line).get()
    }

    /// `-?(0|[1-9][0-9]*)` but not `-0`; at most 6 digits, so it cannot overflow.
    static func plainInteger(_ text: String) -> Int? {
        var digits = Substring(text)
        var negative = false
        if digits.first == "-" {
            negative = true
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 6 else { return nil }
        var value = 0
        for character in digits {
            guard let ascii = character.asciiValue, ascii >= 48, ascii <= 57 else { return nil }
            value = value * 10 + Int(ascii - 48)
        }
        if digits.count > 1 && digits.first == "0" { return nil }
        if negative && value == 0 { return nil }
        return negative ? -value : value
    }
}
