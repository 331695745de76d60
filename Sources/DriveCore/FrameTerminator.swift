/// What ends each frame on the wire (docs/protocol.md §2; default `\n`).
public enum FrameTerminator: String, CaseIterable, Hashable, Sendable {
    case lineFeed = "\n"
    case carriageReturnLineFeed = "\r\n"
    case none = ""

    /// The terminator's bytes.
    public var bytes: [UInt8] { Array(rawValue.utf8) }

    /// The spelling used in config files and flags: `lf`, `crlf` or `none`.
    public var name: String {
        switch self {
        case .lineFeed: return "lf"
        case .carriageReturnLineFeed: return "crlf"
        case .none: return "none"
        }
    }

    /// Parses `lf`/`\n`, `crlf`/`\r\n` or `none`/`""`.
    public init?(name: String) {
        switch name {
        case "lf", "\n", "\\n": self = .lineFeed
        case "crlf", "\r\n", "\\r\\n": self = .carriageReturnLineFeed
        case "none", "": self = .none
        default: return nil
        }
    }
}
