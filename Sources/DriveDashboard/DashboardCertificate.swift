import Crypto
import DriveConfig
import FoundationEssentials
import Glibc
import NIOSSL
import SwiftASN1
import X509

/// The dashboard's HTTPS identity: a certificate chain and its private key, ready for swift-nio-ssl, and
/// the SHA-256 fingerprint of the leaf certificate's DER (`AA:BB:…`, as browsers show it).
///
/// `self-signed`: a P-256 key and a self-signed certificate made with swift-crypto and swift-certificates
/// the first time, written to the state directory and reused on every later start while they parse, match
/// each other, are in date and name every host the page is reached by; otherwise made again (and
/// `regenerated` says why). `files`: the operator's PEM files, read as they are.
package struct DashboardCertificate: Sendable {
    /// The certificate file in the state directory.
    package static let certificateFileName = "dashboard-cert.pem"
    /// The key file in the state directory (mode 0600).
    package static let keyFileName = "dashboard-key.pem"
    /// How long a certificate made here is valid: Apple's limit for server certificates, so a phone that
    /// was told to trust it accepts it.
    static let lifetimeDays = 825

    /// The certificate chain, leaf first.
    package let chain: [NIOSSLCertificate]
    /// The leaf's private key.
    package let privateKey: NIOSSLPrivateKey
    /// The SHA-256 fingerprint of the leaf's DER, upper-case hex pairs joined by `:`.
    package let fingerprint: String
    /// Why the stored certificate was made again (nil: reused, or read from the operator's files).
    package let regenerated: String?

    /// swift-nio-ssl's server configuration for this identity (TLS 1.2 and later).
    package var serverConfiguration: TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
    }

    /// The identity for `tls`: the operator's files, or the stored self-signed one (made when needed) in
    /// `directory`, naming `hosts`. Throws a `DashboardError` that names the file and the problem.
    package static func load(_ tls: DashboardTLS, directory: () throws -> String, hosts: [SubjectName]) throws -> DashboardCertificate {
        switch tls {
        case .off:
            throw DashboardError("TLS is off")
        case .files(let cert, let key):
            return try fromFiles(cert: cert, key: key)
        case .selfSigned:
            return try selfSigned(directory: try directory(), hosts: hosts)
        }
    }

    /// The operator's certificate chain and key (PEM), checked to belong together.
    static func fromFiles(cert: String, key: String) throws -> DashboardCertificate {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(cert)
        } catch {
            throw DashboardError("[dashboard] cert \(cert): not a readable PEM certificate (\(error))")
        }
        guard let leaf = chain.first else { throw DashboardError("[dashboard] cert \(cert): no certificate in the file") }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw DashboardError("[dashboard] key \(key): not a readable PEM private key (\(error))")
        }
        let der: [UInt8]
        do {
            der = try leaf.toDERBytes()
        } catch {
            throw DashboardError("[dashboard] cert \(cert): \(error)")
        }
        let identity = DashboardCertificate(chain: chain, privateKey: privateKey, fingerprint: fingerprint(of: der), regenerated: nil)
        do {
            // BoringSSL checks here that the key is the certificate's.
            _ = try NIOSSLContext(configuration: identity.serverConfiguration)
        } catch {
            throw DashboardError("[dashboard] cert \(cert) and key \(key) do not go together (\(error))")
        }
        return identity
    }

    /// The stored self-signed identity in `directory`, or a new one written there.
    static func selfSigned(directory: String, hosts: [SubjectName], now: Date = Date()) throws -> DashboardCertificate {
        let certPath = directory + "/" + certificateFileName
        let keyPath = directory + "/" + keyFileName
        let reason: String
        switch stored(certPath: certPath, keyPath: keyPath, hosts: hosts, now: now) {
        case .success(let identity):
            return identity
        case .failure(let why):
            reason = why.description
        }
        try StateFile.makeDirectory(directory)
        let key = P256.Signing.PrivateKey()
        let certificate: Certificate
        let certPEM: String
        do {
            let name = try DistinguishedName { CommonName("carbridge dashboard") }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(hosts.map(\.generalName))
            }
            certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + Double(lifetimeDays) * 86400, issuer: name, subject: name,
                signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(key))
            certPEM = try certificate.serializeAsPEM().pemString
        } catch {
            throw DashboardError("cannot make the dashboard's certificate: \(error)")
        }
        // The key first: a certificate without its key on disk is never left behind as the newer file.
        try StateFile.writeAtomically(key.pemRepresentation + "\n", to: keyPath, mode: 0o600)
        try StateFile.writeAtomically(certPEM + "\n", to: certPath, mode: 0o644)
        switch stored(certPath: certPath, keyPath: keyPath, hosts: hosts, now: now) {
        case .success(let identity):
            return DashboardCertificate(chain: identity.chain, privateKey: identity.privateKey, fingerprint: identity.fingerprint, regenerated: reason)
        case .failure(let why):
            throw DashboardError("the dashboard's certificate just written to \(certPath) does not read back: \(why)")
        }
    }

    /// The identity stored at the two paths, or why it cannot be reused.
    static func stored(certPath: String, keyPath: String, hosts: [SubjectName], now: Date) -> Result<DashboardCertificate, DashboardError> {
        let certText: String
        let keyText: String
        do {
            certText = try StateFile.read(certPath)
            keyText = try StateFile.read(keyPath)
        } catch {
            return .failure(error)
        }
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: certText)
        } catch {
            return .failure(DashboardError("\(certPath) is not a PEM certificate (\(error))"))
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: keyText)
        } catch {
            return .failure(DashboardError("\(keyPath) is not a PEM P-256 private key (\(error))"))
        }
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            return .failure(DashboardError("\(keyPath) is not the key of \(certPath)"))
        }
        guard certificate.notValidAfter > now + 86400, certificate.notValidBefore <= now else {
            return .failure(DashboardError("\(certPath) is out of date (valid \(certificate.notValidBefore) to \(certificate.notValidAfter))"))
        }
        let named = (try? certificate.extensions.subjectAlternativeNames).map { Array($0) } ?? []
        if let missing = hosts.first(where: { !named.contains($0.generalName) }) {
            return .failure(DashboardError("\(certPath) does not name \(missing)"))
        }
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            let der = serializer.serializedBytes
            let chain = [try NIOSSLCertificate(bytes: der, format: .der)]
            let privateKey = try NIOSSLPrivateKey(bytes: Array(keyText.utf8), format: .pem)
            return .success(DashboardCertificate(chain: chain, privateKey: privateKey, fingerprint: fingerprint(of: der), regenerated: nil))
        } catch {
            return .failure(DashboardError("\(certPath): \(error)"))
        }
    }

    /// SHA-256 of `der` as `AA:BB:…`.
    package static func fingerprint(of der: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return SHA256.hash(data: der).map { "\(digits[Int($0 >> 4)])\(digits[Int($0 & 0xF)])" }.joined(separator: ":")
    }
}

extension DashboardCertificate {
    /// A name the certificate is valid for: an IP address or a DNS name.
    package enum SubjectName: Hashable, Sendable, CustomStringConvertible {
        /// An IPv4 (4 bytes) or IPv6 (16 bytes) address.
        case ip([UInt8])
        /// A host name.
        case dns(String)

        /// `127.0.0.1`, `::1` or a host name: an address literal is an `ip`, anything else a `dns`.
        package init(_ text: String) {
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, text, &v4) == 1 {
                self = .ip(withUnsafeBytes(of: &v4) { Array($0) })
            } else if inet_pton(AF_INET6, text, &v6) == 1 {
                self = .ip(withUnsafeBytes(of: &v6) { Array($0) })
            } else {
                self = .dns(text.lowercased())
            }
        }

        var generalName: GeneralName {
            switch self {
            case .ip(let bytes): return .ipAddress(ASN1OctetString(contentBytes: bytes[...]))
            case .dns(let name): return .dnsName(name)
            }
        }

        package var description: String {
            switch self {
            case .ip(let bytes) where bytes.count == 4: return bytes.map(String.init).joined(separator: ".")
            case .ip(let bytes): return stride(from: 0, to: bytes.count, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
            case .dns(let name): return name
            }
        }
    }

    /// The names a self-signed certificate for `listen` carries: the listen host, `localhost` and
    /// 127.0.0.1, and, when it listens on every address (0.0.0.0 or ::), this machine's host name and
    /// its non-loopback IPv4 addresses, so a phone on the LAN reaches a name the certificate has.
    package static func subjectNames(for listen: ListenAddress) -> [SubjectName] {
        var names: [SubjectName] = []
        func add(_ name: SubjectName) { if !names.contains(name) { names.append(name) } }
        let wildcard = listen.host == "0.0.0.0" || listen.host == "::"
        if !wildcard { add(SubjectName(listen.host)) }
        add(.dns("localhost"))
        add(.ip([127, 0, 0, 1]))
        if wildcard {
            var buffer = [CChar](repeating: 0, count: 256)
            if gethostname(&buffer, buffer.count - 1) == 0 {
                let hostname = String(cString: buffer)
                if !hostname.isEmpty && hostname != "localhost" { add(.dns(hostname.lowercased())) }
            }
            for address in localIPv4Addresses() { add(.ip(address)) }
        }
        return names
    }

    /// This machine's IPv4 addresses outside 127.0.0.0/8 (`getifaddrs`).
    static func localIPv4Addresses() -> [[UInt8]] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            if let socketAddress = current.pointee.ifa_addr, socketAddress.pointee.sa_family == sa_family_t(AF_INET) {
                let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
                if bytes[0] != 127 && !addresses.contains(bytes) { addresses.append(bytes) }
            }
            entry = current.pointee.ifa_next
        }
        return addresses
    }
}
