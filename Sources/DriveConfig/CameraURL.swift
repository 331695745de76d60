/// The car's camera stream (`[dashboard] camera_url`): an absolute `http://` or `https://` URL that the
/// page shows in an `<img>` (an ESP32-CAM serves MJPEG over HTTP). The browser loads it itself: nothing is
/// proxied, and the page's Content-Security-Policy lets images come from exactly its `origin`.
public struct CameraURL: Hashable, Sendable, CustomStringConvertible {
    /// The URL as written.
    public let text: String
    /// `scheme://host[:port]`, lower case: the one origin `img-src` gains.
    public let origin: String
    /// True for `http://` (mixed content on an HTTPS page).
    public let isPlainHTTP: Bool

    /// Parses an absolute `http://` or `https://` URL with a host; throws what is wrong otherwise. Quotes,
    /// spaces, `*`, `;`, `,`, `<`, `>`, `\` and user info (`@` before the host) are refused: the origin goes
    /// into a header and the URL into the page.
    public init(parsing text: String) throws(CameraURLError) {
        let lower = text.lowercased()
        let scheme: String
        if lower.hasPrefix("http://") {
            scheme = "http"
        } else if lower.hasPrefix("https://") {
            scheme = "https"
        } else {
            throw CameraURLError("\"\(text)\" is not an absolute http:// or https:// URL (e.g. \"http://192.168.4.1:81/stream\")")
        }
        let forbidden: Set<Character> = ["\"", "'", " ", "\t", "*", ";", ",", "<", ">", "\\", "`"]
        if let bad = text.first(where: { forbidden.contains($0) || !$0.isASCII || $0.asciiValue! < 0x21 }) {
            throw CameraURLError("\"\(text)\" contains \(bad == " " ? "a space" : "'\(bad)'"), which a camera URL may not")
        }
        let rest = text.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.isEmpty { throw CameraURLError("\"\(text)\" has no host") }
        if authority.contains("@") { throw CameraURLError("\"\(text)\": user names or passwords in the URL are not accepted") }
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw CameraURLError("\"\(text)\": the IPv6 host has no ']'") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), Self.isPort(after.dropFirst()) else {
                    throw CameraURLError("\"\(text)\": the port must be a number 1…65535")
                }
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            if parts.count == 2 && !Self.isPort(parts[1]) { throw CameraURLError("\"\(text)\": the port must be a number 1…65535") }
        }
        if host.isEmpty { throw CameraURLError("\"\(text)\" has no host") }
        self.text = text
        self.origin = "\(scheme)://\(authority.lowercased())"
        self.isPlainHTTP = scheme == "http"
    }

    /// The URL as written.
    public var description: String { text }

    private static func isPort(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(text) else { return false }
        return (1...65535).contains(port)
    }
}

/// Why a `CameraURL` did not parse.
public struct CameraURLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problem, in words.
    public var description: String
    init(_ description: String) { self.description = description }
}
