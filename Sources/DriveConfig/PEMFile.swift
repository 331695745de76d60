/// A light check of a PEM file named in the config (`[dashboard] cert`, `key`): readable, and holding a
/// block of the right kind whose body is base64. The full parse (the certificate's DER, the key's curve)
/// happens when the dashboard starts; this lets `check-config` name the file and the problem without the
/// dashboard's TLS code, which plain `carbridge` does not link.
enum PEMFile {
    /// What the file must hold.
    enum Kind {
        /// `-----BEGIN CERTIFICATE-----`.
        case certificate
        /// `-----BEGIN PRIVATE KEY-----`, `EC PRIVATE KEY` or `RSA PRIVATE KEY`.
        case privateKey

        var words: String { self == .certificate ? "a PEM certificate" : "a PEM private key" }

        func accepts(label: Substring) -> Bool {
            switch self {
            case .certificate: return label == "CERTIFICATE"
            case .privateKey: return label == "PRIVATE KEY" || label == "EC PRIVATE KEY" || label == "RSA PRIVATE KEY"
            }
        }
    }

    /// What is wrong with the file at `path`, or nil when it holds a well-formed block of `kind`.
    static func problem(path: String, kind: Kind) -> String? {
        let text: String
        do {
            text = try TextFile.read(path)
        } catch {
            return "cannot read \(path): \(error.reason)"
        }
        var label: Substring?
        var body = 0
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine[...]
            if let open = label {
                if line == "-----END \(open)-----" {
                    if kind.accepts(label: open) && body > 0 { return nil }
                    label = nil
                    body = 0
                } else if line.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=") }) {
                    body += line.count
                } else {
                    return "\(path) is not \(kind.words): a line of its \(open) block is not base64"
                }
            } else if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                label = line.dropFirst("-----BEGIN ".count).dropLast(5)
            }
        }
        if label != nil { return "\(path) is not \(kind.words): a block has no END line" }
        return "\(path) is not \(kind.words) (no -----BEGIN \(kind == .certificate ? "CERTIFICATE" : "PRIVATE KEY")----- block)"
    }
}
