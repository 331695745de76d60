/// Turns the bytes a terminal sends into keys: arrows come as `ESC [ A` (or `ESC O A`
/// in application mode), everything else as single bytes. Incomplete escape sequences
/// are kept until the next read; unknown ones are dropped whole.
public struct TerminalKeyDecoder: Sendable {
    private var pending: [UInt8] = []

    /// Creates a decoder with nothing pending.
    public init() {}

    /// Decodes `bytes` (appended to any incomplete sequence from the last call).
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> [TerminalKey] {
        pending.append(contentsOf: bytes)
        var keys: [TerminalKey] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            if byte == 0x1B {
                guard index + 1 < pending.count else { break }  // wait for the rest
                let second = pending[index + 1]
                guard second == UInt8(ascii: "[") || second == UInt8(ascii: "O") else {
                    index += 1  // a lone ESC: ignore it
                    continue
                }
                // CSI: parameters (0x30–0x3F), intermediates, then one final byte 0x40–0x7E.
                var end = index + 2
                while end < pending.count, !(0x40...0x7E).contains(pending[end]) { end += 1 }
                guard end < pending.count else { break }
                switch pending[end] {
                case UInt8(ascii: "A"): keys.append(.up)
                case UInt8(ascii: "B"): keys.append(.down)
                case UInt8(ascii: "C"): keys.append(.right)
                case UInt8(ascii: "D"): keys.append(.left)
                default: break
                }
                index = end + 1
                continue
            }
            switch byte {
            case 0x03, 0x04: keys.append(.interrupt)
            case 0x20...0x7E:
                keys.append(.character(Character(Unicode.Scalar(byte)).lowercased().first ?? " "))
            default: break
            }
            index += 1
        }
        pending.removeFirst(index)
        return keys
    }
}
