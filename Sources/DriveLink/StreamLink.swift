import DriveCore
import DriveSystem

/// A link over a byte stream (TCP, RFCOMM, a serial tty, a socketpair): a `StreamTransport` under the
/// `LinkSupervisor` (connect timeout, back-off 0.5 s doubling to 5 s, flush, shutdown).
public typealias StreamLink<Connector: StreamConnector> = SupervisedLink<StreamTransport<Connector>>

extension SupervisedLink {
    /// A link over `connector`; nothing happens until `start()`.
    public convenience init<Connector: StreamConnector>(
        connector: Connector, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(),
        options: LinkOptions = LinkOptions()
    ) where Transport == StreamTransport<Connector> {
        self.init(
            transport: StreamTransport(connector: connector, loop: loop, encoder: encoder, options: options),
            loop: loop, connectTimeout: options.connectTimeout)
    }
}
