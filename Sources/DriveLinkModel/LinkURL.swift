/// Where the car is: parsed from `rfcomm://…`, `ble://…`, `serial://…`, `tcp://…`, `stdout` or `sim`.
public enum LinkURL: Hashable, Sendable, CustomStringConvertible {
    /// BlueZ RFCOMM to a Bluetooth address (upper-case `AA:BB:CC:DD:EE:FF`) on channel 1…30.
    case rfcomm(address: String, channel: Int)
    /// BlueZ RFCOMM to the paired (or discovered) device with this name or alias (`rfcomm://HC-05`,
    /// `rfcomm://name=HC-05`), found through bluetoothd before the link opens; without a channel, the
    /// channel of its SDP Serial Port record (DriveBluetooth resolves it; the link is still plain RFCOMM).
    case rfcommDevice(name: String, channel: Int?)
    /// Bluetooth Low Energy to a "serial" module (HM-10, Nordic UART) at this address (upper-case), through
    /// bluetoothd's GATT client.
    case ble(address: String)
    /// Bluetooth Low Energy to the car advertising this name (`ble://HMSoft`, `ble://name=HMSoft`), found
    /// through bluetoothd on every connect (an unpaired LE device is forgotten soon after it goes).
    case bleDevice(name: String)
    /// A serial tty (e.g. `/dev/rfcomm0`, `/dev/ttyUSB0`) at a baud rate.
    case serial(path: String, baud: Int)
    /// A TCP connection (a car bridge on the network, or `carbridge car-sim`).
    case tcp(host: String, port: Int)
    /// Dry run: frames are printed to standard output.
    case stdout
    /// An in-process simulated car.
    case sim

    /// The baud rates a serial link accepts.
    public static let supportedBaudRates = [9600, 19200, 38400, 57600, 115200]
    /// The default serial baud rate (HC-05 factory setting).
    public static let defaultBaud = 9600
    /// The default RFCOMM channel.
    public static let defaultChannel = 1
    /// The accepted forms, for error messages and help.
    public static let acceptedForms =
        "rfcomm://AA:BB:CC:DD:EE:FF[/CHANNEL], rfcomm://NAME[/CHANNEL], ble://AA:BB:CC:DD:EE:FF, ble://NAME, serial:///dev/rfcomm0[?baud=9600], tcp://HOST:PORT, stdout or sim"

    /// Parses a link URL; throws `LinkURLError` naming what is wrong.
    public init(parsing text: String) throws(LinkURLError) {
        let trimmed = text.trimmingASCIISpaces()
        func fail(_ problem: String) -> LinkURLError { LinkURLError(url: text, problem: problem) }
        if trimmed.isEmpty { throw fail("the link URL is empty") }
        if trimmed == "stdout" || trimmed == "stdout://" { self = .stdout; return }
        if trimmed == "sim" || trimmed == "sim://" { self = .sim; return }
        guard let schemeEnd = trimmed.firstRange(of: "://") else {
            throw fail("\"\(trimmed)\" has no scheme")
        }
        let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
        let rest = String(trimmed[schemeEnd.upperBound...])
        switch scheme {
        case "rfcomm": self = try Self.parseRFCOMM(rest, fail)
        case "ble": self = try Self.parseBLE(rest, fail)
        case "serial": self = try Self.parseSerial(rest, fail)
        case "tcp": self = try Self.parseTCP(rest, fail)
        default: throw fail("unknown scheme \"\(scheme)\"")
        }
    }

    private static func parseRFCOMM(_ rest: String, _ fail: (String) -> LinkURLError) throws(LinkURLError) -> LinkURL {
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw fail("an rfcomm URL is rfcomm://ADDRESS[/CHANNEL] or rfcomm://NAME[/CHANNEL] (write a '/' in a name as %2F)")
        }
        var channel: Int?
        if parts.count == 2 {
            guard let value = decimal(parts[1]), (1...30).contains(value) else {
                throw fail("RFCOMM channel \"\(parts[1])\" must be a number from 1 to 30")
            }
            channel = value
        }
        let first = String(parts[0])
        let explicitName = first.lowercased().hasPrefix("name=")
        if !explicitName {
            let address = first.uppercased()
            if isBluetoothAddress(address) { return .rfcomm(address: address, channel: channel ?? defaultChannel) }
            // A device name has no ':' (write one as %3A, or use name=): this is a mistyped address.
            if first.contains(":") || first.isEmpty {
                throw fail("\"\(parts[0])\" is not a Bluetooth address (six hex pairs like 98:D3:31:FB:12:34)")
            }
        }
        let encoded = explicitName ? String(first.dropFirst(5)) : first
        guard let name = decodeDeviceName(encoded) else {
            throw fail("\"\(encoded)\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        }
        guard !name.isEmpty, name.utf8.count <= 248 else {
            throw fail("a device name must have 1 to 248 bytes, like rfcomm://HC-05")
        }
        return .rfcommDevice(name: name, channel: channel)
    }

    private static func parseBLE(_ rest: String, _ fail: (String) -> LinkURLError) throws(LinkURLError) -> LinkURL {
        var first = rest
        if first.hasSuffix("/") { first.removeLast() }
        if first.contains("/") {
            throw fail("a ble URL is ble://ADDRESS or ble://NAME, with no channel (write a '/' in a name as %2F)")
        }
        let explicitName = first.lowercased().hasPrefix("name=")
        if !explicitName {
            let address = first.uppercased()
            if isBluetoothAddress(address) { return .ble(address: address) }
            if first.contains(":") || first.isEmpty {
                throw fail("\"\(first)\" is not a Bluetooth address (six hex pairs like C8:FD:19:12:34:56)")
            }
        }
        let encoded = explicitName ? String(first.dropFirst(5)) : first
        guard let name = decodeDeviceName(encoded) else {
            throw fail("\"\(encoded)\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        }
        // An LE advertisement carries at most 29 bytes of name; bluetoothd may learn a longer one (248).
        guard !name.isEmpty, name.utf8.count <= 248 else {
            throw fail("a device name must have 1 to 248 bytes, like ble://HMSoft")
        }
        return .bleDevice(name: name)
    }

    /// A device name as a URL part: unreserved characters as they are, everything else as %XX.
    public static func encodeDeviceName(_ name: String) -> String {
        var out = ""
        for byte in name.utf8 {
            let scalar = Unicode.Scalar(byte)
            if (byte < 0x80 && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar))))
                || "-_.~".unicodeScalars.contains(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// The name a URL part spells (%XX decoded); nil for a bad escape, invalid UTF-8 or a control character.
    static func decodeDeviceName(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: "%") {
                guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        let name = String(decoding: bytes, as: UTF8.self)
        guard Array(name.utf8) == bytes, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return name
    }

    private static func parseSerial(_ rest: String, _ fail: (String) -> LinkURLError) throws(LinkURLError) -> LinkURL {
        var path = rest
        var baud = defaultBaud
        if let question = rest.firstIndex(of: "?") {
            path = String(rest[..<question])
            let query = rest[rest.index(after: question)...]
            for item in query.split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, pair[0] == "baud" else {
                    throw fail("unknown serial option \"\(item)\" (only baud=N is accepted)")
                }
                guard let value = decimal(pair[1]), supportedBaudRates.contains(value) else {
                    let rates = supportedBaudRates.map(String.init).joined(separator: ", ")
                    throw fail("baud \"\(pair[1])\" is not supported (use one of \(rates))")
                }
                baud = value
            }
        }
        guard path.hasPrefix("/"), path.count > 1 else {
            throw fail("a serial URL needs an absolute device path, like serial:///dev/rfcomm0")
        }
        guard !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw fail("the serial device path contains a control character")
        }
        return .serial(path: path, baud: baud)
    }

    private static func parseTCP(_ rest: String, _ fail: (String) -> LinkURLError) throws(LinkURLError) -> LinkURL {
        var hostPort = Substring(rest)
        if hostPort.hasSuffix("/") { hostPort = hostPort.dropLast() }
        do throws(HostPortError) {
            let endpoint = try HostPort(parsing: hostPort, ports: 1...65535)
            return .tcp(host: endpoint.host, port: endpoint.port)
        } catch {
            switch error {
            case .missingCloseBracket: throw fail("missing ']' after the IPv6 address")
            case .missingPort: throw fail("a tcp URL needs a port: tcp://HOST:PORT")
            case .unbracketedIPv6: throw fail("write an IPv6 address in brackets: tcp://[::1]:PORT")
            case .emptyHost: throw fail("a tcp URL needs a host: tcp://HOST:PORT")
            case .invalidHost(let host): throw fail("\"\(host)\" is not a host name")
            case .invalidPort(let text): throw fail("TCP port \"\(text)\" must be a number from 1 to 65535")
            }
        }
    }

    /// True for `AA:BB:CC:DD:EE:FF` (hex, any case).
    public static func isBluetoothAddress(_ text: String) -> Bool {
        let pairs = text.split(separator: ":", omittingEmptySubsequences: false)
        guard pairs.count == 6 else { return false }
        return pairs.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    static func decimal<S: StringProtocol>(_ text: S) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// The URL in its canonical spelling.
    public var description: String {
        switch self {
        case .rfcomm(let address, let channel): return "rfcomm://\(address)/\(channel)"
        case .rfcommDevice(let name, let channel):
            return "rfcomm://name=\(Self.encodeDeviceName(name))" + (channel.map { "/\($0)" } ?? "")
        case .ble(let address): return "ble://\(address)"
        case .bleDevice(let name): return "ble://name=\(Self.encodeDeviceName(name))"
        case .serial(let path, let baud): return "serial://\(path)?baud=\(baud)"
        case .tcp(let host, let port): return "tcp://\(HostPort(host: host, port: port))"
        case .stdout: return "stdout"
        case .sim: return "sim"
        }
    }
}

extension String {
    func trimmingASCIISpaces() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" || first == "\n" || first == "\r" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
