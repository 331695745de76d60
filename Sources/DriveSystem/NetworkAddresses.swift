import Glibc

/// This machine's network addresses (getifaddrs(3)).
public enum NetworkAddresses {
    /// The first IPv4 address of an interface that is up and not loopback (dotted quad), nil when there is
    /// none; throws when the interfaces cannot be listed.
    public static func firstExternalIPv4() throws(SystemError) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { throw SystemError(call: "getifaddrs", errno: errno) }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            let flags = Int32(bitPattern: current.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET)
            else { continue }
            let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            // s_addr is in network order: its first byte in memory is the address's first number.
            let bytes = withUnsafeBytes(of: ipv4) { Array($0) }
            return bytes.map(String.init).joined(separator: ".")
        }
        return nil
    }
}
