// The terminal keyboard: TerminalKeyDecoder, fed whole and in pieces, with the invariants of its rules.
import DriveTerminal
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeys(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let bound = TerminalKeyDecoder.maximumParameterBytes + 2

    var whole = TerminalKeyDecoder()
    let wholeKeys = whole.decode(bytes)
    fuzzCheck(wholeKeys.count <= bytes.count, "more keys than bytes")
    fuzzCheck(whole.pendingByteCount <= bound, "holds \(whole.pendingByteCount) bytes")

    var pieces = TerminalKeyDecoder()
    var pieceKeys: [TerminalKey] = []
    for chunk in fuzzChunks(bytes) {
        pieceKeys += pieces.decode(chunk)
        fuzzCheck(pieces.pendingByteCount <= bound, "holds \(pieces.pendingByteCount) bytes")
    }
    fuzzCheck(pieceKeys == wholeKeys, "pieces \(pieceKeys) vs whole \(wholeKeys)")

    // Whatever came before, a complete arrow sequence and a plain key typed after it both come through.
    let after = whole.decode([0x1B, 0x5B, 0x41, 0x65])
    fuzzCheck(after.suffix(2) == [.up, .character("e")], "ESC [ A e after the input gave \(after)")
    fuzzCheck(whole.pendingByteCount == 0, "left \(whole.pendingByteCount) bytes pending")

    // A stray ESC [ never eats a following '+' (an intermediate byte aborts it): the '+' always arrives.
    var stray = TerminalKeyDecoder()
    _ = stray.decode(bytes)
    let plus = stray.decode([0x1B, 0x5B, 0x2B])
    fuzzCheck(plus.last == .character("+"), "ESC [ + after the input gave \(plus)")
    return 0
}
