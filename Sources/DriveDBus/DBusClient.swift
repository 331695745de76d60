/// What a D-Bus client needs of a connection: calls, signal subscriptions, closing. `DBusConnection` is
/// the real one; tests drive a client (the BLE link) through a fake that answers from a script.
package protocol DBusClient: AnyObject {
    /// True until the connection failed or was closed.
    var isOpen: Bool { get }
    /// Called once when the connection fails or is closed by the other side.
    var onClose: ((DBusError) -> Void)? { get set }
    /// Calls `member` asynchronously; `reply` runs on the loop with the reply's values or the error. Unix fds
    /// in the reply belong to it: `dup` one to keep it past `reply`.
    func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue],
        timeout: Duration, reply: @escaping (Result<[DBusValue], DBusError>) -> Void)
    /// Subscribes to signals (nil = any) from `sender`; `cancel()` on the result removes it.
    func subscribe(
        sender: String?, path: String?, interface: String?, member: String?,
        _ handler: @escaping (DBusConnection.Signal) -> Void) -> any DBusSubscription
    /// Leaves the bus.
    func close()
}

/// A signal subscription; `cancel()` removes it.
package protocol DBusSubscription: AnyObject {
    /// Removes the subscription (no handler call after this).
    func cancel()
}

extension DBusConnection: DBusClient {
    /// `onSignal`, as a `DBusSubscription`.
    package func subscribe(
        sender: String?, path: String?, interface: String?, member: String?,
        _ handler: @escaping (DBusConnection.Signal) -> Void
    ) -> any DBusSubscription {
        onSignal(sender: sender, path: path, interface: interface, member: member, handler)
    }
}

extension DBusConnection.Token: DBusSubscription {}
