import Hummingbird
import NIOCore

/// Hummingbird's request context plus the client's address, which the login and join limits count by.
struct DashboardRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's IP address (an IPv4 one mapped into IPv6 as plain IPv4), as the connection limit counts it.
    let clientAddress: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = ConnectionGuard.key(source.channel.remoteAddress)
    }
}
