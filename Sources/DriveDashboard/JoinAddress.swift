import DriveConfig
import DriveSystem

/// Where phones reach the dashboard: the start of the join URL, `SCHEME://HOST:PORT`.
package enum JoinAddress {
    /// Why no join URL could be worked out, in words.
    package struct Unknown: Error, CustomStringConvertible, Sendable {
        /// What is missing and what to set.
        package var description: String
    }

    /// `[dashboard] url` when set; else the listen address when it names one host (a wildcard does not),
    /// else this machine's first non-loopback IPv4 address (`port`: the port listened on).
    package static func base(
        settings: CarbridgeConfig.Dashboard, port: Int,
        externalIPv4: () throws(SystemError) -> String? = NetworkAddresses.firstExternalIPv4
    ) -> Result<String, Unknown> {
        if let url = settings.url { return .success(url) }
        let host = settings.listen?.host ?? "0.0.0.0"
        let scheme = settings.scheme
        if host != "0.0.0.0" && host != "::" && !host.isEmpty {
            return .success("\(scheme)://\(ListenAddress(host: host, port: port))")
        }
        do {
            guard let address = try externalIPv4() else {
                return .failure(Unknown(description: "this machine has no network address besides loopback: set [dashboard] url"))
            }
            return .success("\(scheme)://\(address):\(port)")
        } catch {
            return .failure(Unknown(description: "cannot list this machine's addresses (\(error)): set [dashboard] url"))
        }
    }
}
