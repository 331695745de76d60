/// Turns the bytes a terminal sends into keys: arrows come as `ESC [ A` (or `ESC O A`
/// in application mode), everything else as single bytes.
///
/// Escape sequences follow what terminals actually send for keys (ECMA-48's CSI syntax, narrowed
/// to input), so a stray `ESC [` can never eat the driver's keys:
/// - `ESC [`, then at most `maximumParameterBytes` parameter bytes (0x30–0x3F: digits, `;`, `<`…),
///   then one final byte (0x40–0x7E) is one key sequence, consumed whole; arrows become keys, every
///   other sequence (Home, F-keys, `ESC [ 1 ; 5 C`, `ESC [ 2 ~`, rxvt's `ESC [ 2 $`) is dropped whole.
///   The Linux console's `ESC [ [ A`…`E` (F1–F5) is one sequence too.
/// - Keyboards never send intermediate bytes (0x20–0x2F, which includes space, `+` and `-`), control
///   bytes, another `ESC` or bytes ≥ 0x80 inside a sequence. Such a byte **aborts** the sequence: only
///   `ESC [` is dropped and decoding resumes right after it, so `ESC [ + e` gives `+`, `e` and
///   `ESC [ 1 -` gives `1`, `-`.
/// - Right after a bare `ESC [` (no parameters) only the finals terminals send for unmodified keys count:
///   `@` and `A`–`Z`. Any other final — a lower-case letter like `e`, `g`, `c`, `q` — is a key typed after
///   a stray `ESC [` (an Escape press, a sequence cut by a timeout elsewhere): `ESC [` is dropped and the
///   key is decoded. (rxvt's shift-arrows `ESC [ a`…`d` are thereby read as letters, never as driving.)
/// - `ESC O` (SS3) takes one final: `A`–`Z` (arrows, F1–F4, keypad Enter) or the application keypad's
///   `j`–`y`, which are decoded as the keypad's `*` `+` `,` `-` `.` `/` `0`–`9`; anything else aborts it
///   as above.
/// - `ESC` followed by any other byte is dropped (Alt+key gives the key).
/// A sequence still incomplete at the end of `bytes` is kept until the next call (at most
/// `maximumParameterBytes` + 3 bytes are ever held), so one split across two reads still decodes.
public struct TerminalKeyDecoder: Sendable {
    /// The most parameter bytes a key sequence may have (`ESC [ 1 ; 5 C` has 3; the longest key
    /// sequences, kitty's `CSI u` with modifiers and event types, stay well below).
    public static let maximumParameterBytes = 16

    private var pending: [UInt8] = []

    /// Creates a decoder with nothing pending.
    public init() {}

    /// Bytes of an incomplete escape sequence waiting for the next call.
    public var pendingByteCount: Int { pending.count }

    private enum Sequence {
        /// Not decidable yet: wait for more bytes.
        case incomplete
        /// A whole sequence ending at `end` (inclusive), giving `key` if it is one we use.
        case complete(end: Int, key: TerminalKey?)
        /// Not a key sequence: drop the two-byte introducer and decode on from after it.
        case abort
    }

    /// Decodes `bytes` (appended to any incomplete sequence from the last call).
    public mutating func decode(_ bytes: some Swift.Sequence<UInt8>) -> [TerminalKey] {
        pending.append(contentsOf: bytes)
        var keys: [TerminalKey] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            if byte == 0x1B {
                guard index + 1 < pending.count else { break }  // wait for the rest
                let second = pending[index + 1]
                guard second == UInt8(ascii: "[") || second == UInt8(ascii: "O") else {
                    index += 1  // a lone ESC (or Alt+key): ignore the ESC, decode the key
                    continue
                }
                let sequence = second == UInt8(ascii: "[") ? csi(at: index) : ss3(at: index)
                switch sequence {
                case .incomplete:
                    break
                case .complete(let end, let key):
                    if let key { keys.append(key) }
                    index = end + 1
                    continue
                case .abort:
                    index += 2
                    continue
                }
                break  // incomplete: keep it for the next call
            }
            if let key = Self.key(forByte: byte) { keys.append(key) }
            index += 1
        }
        pending.removeFirst(index)
        return keys
    }

    /// The key a single byte outside any sequence is.
    private static func key(forByte byte: UInt8) -> TerminalKey? {
        switch byte {
        case 0x03, 0x04: return .interrupt
        case 0x20...0x7E: return .character(Character(Unicode.Scalar(byte)).lowercased().first ?? " ")
        default: return nil
        }
    }

    /// `ESC [` at `start`: parameters, then a final byte.
    private func csi(at start: Int) -> Sequence {
        var end = start + 2
        // The Linux console's F1–F5: ESC [ [ A…E.
        if end < pending.count, pending[end] == UInt8(ascii: "[") {
            guard end + 1 < pending.count else { return .incomplete }
            return (0x40...0x7E).contains(pending[end + 1]) ? .complete(end: end + 1, key: nil) : .abort
        }
        var parameters = 0
        while end < pending.count {
            let byte = pending[end]
            switch byte {
            case 0x30...0x3F:
                parameters += 1
                if parameters > Self.maximumParameterBytes { return .abort }
                end += 1
            case 0x40...0x5A:
                return .complete(end: end, key: Self.arrow(byte))
            case 0x5B...0x7E:
                // Lower-case and other finals end a key sequence only after parameters (`ESC [ 2 ~`,
                // `ESC [ 97 u`); right after a bare `ESC [` they are keys typed after a stray introducer.
                return parameters > 0 ? .complete(end: end, key: nil) : .abort
            case UInt8(ascii: "$") where parameters > 0:
                return .complete(end: end, key: nil)  // rxvt: shifted editing keys, ESC [ 2 $
            default:
                return .abort  // an intermediate, a control byte, ESC, or a byte ≥ 0x80
            }
        }
        return .incomplete
    }

    /// `ESC O` at `start`: one final byte.
    private func ss3(at start: Int) -> Sequence {
        let end = start + 2
        guard end < pending.count else { return .incomplete }
        let byte = pending[end]
        switch byte {
        case 0x40...0x5A:
            return .complete(end: end, key: Self.arrow(byte))
        case UInt8(ascii: "j")...UInt8(ascii: "y"):
            // The application keypad: j…y are * + , - . / 0…9.
            let keypad = Array("*+,-./0123456789")
            return .complete(end: end, key: .character(keypad[Int(byte - UInt8(ascii: "j"))]))
        default:
            return .abort
        }
    }

    private static func arrow(_ final: UInt8) -> TerminalKey? {
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        default: return nil
        }
    }
}
