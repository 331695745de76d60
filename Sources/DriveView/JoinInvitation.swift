/// The dashboard's invitation to drive from a phone (`[dashboard] join`): the one-time join URL and its
/// QR code as terminal lines, for the live view.
public struct JoinInvitation: Hashable, Sendable {
    /// The URL a phone opens (`SCHEME://HOST:PORT/join?code=…`).
    public var url: String
    /// The QR code, quiet zone included: half blocks, two module rows a line, the light modules drawn
    /// as glyphs (so draw them light on dark).
    public var lines: [String]

    /// An invitation to `url` drawn as `lines`.
    public init(url: String, lines: [String]) {
        self.url = url
        self.lines = lines
    }
}
