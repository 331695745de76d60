/// `HOST:PORT`, an IPv6 host in brackets (`127.0.0.1:7000`, `[::1]:7000`, `car.local:7000`): the one
/// parser of a TCP endpoint, behind `tcp://` link URLs and `carbridge car-sim --listen` (and fit for the
/// dashboard's listen address). It checks the form; each caller says which ports it takes and words
/// the `HostPortError` for its own option.
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    /// The host without brackets: a name, an IPv4 address or an IPv6 address (`::1`).
    public var host: String
    /// The port.
    public var port: Int

    /// Creates an endpoint.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` with a port in `ports`. The problems are checked in this order: the form
    /// (brackets, the colon), an empty host, a host with a character no host name or address has
    /// ('/', brackets, whitespace, control characters), then the port.
    public init(parsing text: some StringProtocol, ports: ClosedRange<Int> = 0...65535) throws(HostPortError) {
        let text = Substring(text)
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .missingCloseBracket }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.hasPrefix(":") else { throw .missingPort }
            portText = after.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .missingPort }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { throw .unbracketedIPv6 }
        }
        guard !host.isEmpty else { throw .emptyHost }
        // A '[' or ']' in a host would make the canonical spelling (`description`) parse as something else.
        guard !host.unicodeScalars.contains(where: { "/[] ".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F })
        else { throw .invalidHost(String(host)) }
        guard let port = LinkURL.decimal(portText), ports.contains(port) else { throw .invalidPort(String(portText)) }
        self.host = String(host)
        self.port = port
    }

    /// `HOST:PORT`, an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why a `HostPort` did not parse (the caller turns it into a sentence naming its option).
public enum HostPortError: Error, Hashable, Sendable {
    /// No `:PORT` (or nothing after an IPv6 address's `]`).
    case missingPort
    /// A `[` without its `]`.
    case missingCloseBracket
    /// An IPv6 address without brackets (`::1:80`).
    case unbracketedIPv6
    /// Nothing before the colon.
    case emptyHost
    /// A host with a character no host has.
    case invalidHost(String)
    /// A port that is not a number, or not one the caller takes.
    case invalidPort(String)
}
