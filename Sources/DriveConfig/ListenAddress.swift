import DriveLinkModel

/// Where the web dashboard listens: `HOST:PORT` (`[dashboard] listen`, `carbridge run --dashboard`).
///
/// HOST is an IPv4 address, `[IPv6]` in brackets, or `localhost`; PORT is 0…65535 (0: any free port,
/// for tests). Only the loopback addresses (127.0.0.0/8, `::1`, `localhost`) count as local: any other
/// address needs a `token` before controls may be enabled.
public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
    /// The host as written, without brackets (`127.0.0.1`, `::1`, `0.0.0.0`, `localhost`).
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`HostPort`, DriveLink's one parser of it); throws what is wrong otherwise.
    public init(parsing text: String) throws(ListenAddressError) {
        let endpoint: HostPort
        do throws(HostPortError) {
            endpoint = try HostPort(parsing: text)
        } catch {
            switch error {
            case .missingPort, .missingCloseBracket:
                throw ListenAddressError("\"\(text)\" is not HOST:PORT (e.g. \"127.0.0.1:8080\")")
            case .invalidPort:
                throw ListenAddressError("\"\(text)\": the port must be a number 0…65535")
            case .unbracketedIPv6:
                throw ListenAddressError("\"\(text)\": write an IPv6 address in brackets, e.g. \"[::1]:8080\"")
            case .emptyHost, .invalidHost:
                throw ListenAddressError("\"\(text)\": the host must be an IPv4 address, [IPv6] or localhost")
            }
        }
        if text.hasPrefix("[") {
            guard Self.isIPv6(endpoint.host) else { throw ListenAddressError("\"\(text)\": [\(endpoint.host)] is not an IPv6 address") }
        } else if endpoint.host != "localhost" && !Self.isIPv4(endpoint.host) {
            throw ListenAddressError("\"\(text)\": the host must be an IPv4 address, [IPv6] or localhost")
        }
        self.host = endpoint.host
        self.port = endpoint.port
    }

    /// True for 127.0.0.0/8, `::1` and `localhost`: only this machine can connect.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        return Self.isIPv4(host) && host.hasPrefix("127.")
    }

    /// `HOST:PORT`, IPv6 in brackets.
    public var description: String { HostPort(host: host, port: port).description }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy { $0.isASCII && $0.isNumber } && Int(part)! <= 255
        }
    }

    static func isIPv6(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 45 && text.contains(":")
            && text.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }
    }
}

/// Why a `ListenAddress` did not parse.
public struct ListenAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problem, in words.
    public var description: String
    init(_ description: String) { self.description = description }
}
