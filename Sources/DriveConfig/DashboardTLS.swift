/// How the dashboard serves its page (`[dashboard] tls`, with `cert` and `key` for `files`).
public enum DashboardTLS: Hashable, Sendable {
    /// Plain HTTP.
    case off
    /// HTTPS with a P-256 key and certificate that carbridge makes once and keeps in its state directory.
    case selfSigned
    /// HTTPS with the operator's certificate (chain) and private key, PEM files.
    case files(cert: String, key: String)

    /// What `tls` says, before `cert` and `key` are taken into account.
    public enum Mode: String, CaseIterable, Sendable {
        /// `off`: plain HTTP.
        case off
        /// `self-signed`: a certificate of carbridge's own.
        case selfSigned = "self-signed"
        /// `files`: `cert` and `key`.
        case files
    }

    /// True unless `off`.
    public var isOn: Bool { self != .off }

    /// `http` or `https`.
    public var scheme: String { isOn ? "https" : "http" }
}
