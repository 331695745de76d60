// What the car sends: LineAssembler, fed whole and in pieces, against a simple model of docs/protocol.md §7
// (lines end with \n or \r\n; a line over maximumLineBytes is cut before a UTF-8 character and marked,
// the rest up to the next \n dropped; bad UTF-8 and control bytes escaped).
import DriveLink
import FuzzSupport

private let limit = LineAssembler.maximumLineBytes

/// The lines the model expects for the whole stream, the final unterminated piece (if any) last.
private func model(_ bytes: [UInt8]) -> [String] {
    var lines: [String] = []
    var segments = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    let last = segments.removeLast()
    for var segment in segments {
        if segment.last == 0x0D { segment = segment.dropLast() }
        lines.append(rendered(segment, terminated: true))
    }
    if !last.isEmpty { lines.append(rendered(last, terminated: false)) }
    return lines
}

private func rendered(_ segment: ArraySlice<UInt8>, terminated: Bool) -> String {
    // A \r that was stripped (or, unterminated, one right at the limit) does not count against the limit.
    let fits = segment.count <= limit || (!terminated && segment.count == limit + 1 && segment.last == 0x0D)
    if fits { return LineAssembler.render(segment) }
    let bytes = Array(segment)
    var keep = limit
    while keep > limit - 3, bytes[keep] & 0xC0 == 0x80 { keep -= 1 }
    if bytes[keep] & 0xC0 == 0x80 { keep = limit }
    return LineAssembler.render(bytes[..<keep]) + LineAssembler.cutMarker
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCarLines(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var bytes = fuzzBytes(data, size)
    // Long lines matter here: a leading 0xFF byte repeats the rest until it is over the limit.
    if bytes.first == 0xFF, bytes.count > 1 {
        let body = Array(bytes.dropFirst())
        bytes = []
        while bytes.count <= limit + 8 { bytes += body }
    }
    var whole = LineAssembler()
    var wholeLines = whole.append(bytes)
    if let rest = whole.finish() { wholeLines.append(rest) }

    var pieces = LineAssembler()
    var pieceLines: [String] = []
    for chunk in fuzzChunks(bytes) { pieceLines += pieces.append(chunk) }
    if let rest = pieces.finish() { pieceLines.append(rest) }
    fuzzCheck(pieceLines == wholeLines, "pieces and whole differ")

    let expected = model(bytes)
    fuzzCheck(wholeLines == expected, "assembler \(wholeLines.map(\.utf8.count)) vs model \(expected.map(\.utf8.count))")
    for line in wholeLines {
        // ≤ limit input bytes, each shown as at most 4 characters (\xNN), plus the marker.
        fuzzCheck(line.utf8.count <= 4 * (limit + 1) + LineAssembler.cutMarker.utf8.count, "line of \(line.utf8.count) bytes")
        fuzzCheck(line.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) },
                  "a control character is shown raw")
    }
    return 0
}
