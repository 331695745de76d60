import CLinux
import DriveCore
import DriveLink
import DriveSystem
import Glibc

/// The connector behind `sim`: each connect makes a socketpair and serves the far end with a
/// `CarSimulatorSession` on the same loop.
package final class SocketPairCarConnector: StreamConnector {
    /// `sim`.
    package let name = "sim"
    /// The car's session for the current connection.
    package private(set) var session: CarSimulatorSession?
    /// Called with each new session before it starts (to attach callbacks).
    package var onSession: ((CarSimulatorSession) -> Void)?

    private let loop: EventLoop
    private let options: CarSimulatorSession.Options

    /// Creates a connector whose car uses `options`.
    package init(loop: EventLoop, options: CarSimulatorSession.Options = .init()) {
        self.loop = loop
        self.options = options
    }

    /// Makes the socketpair and starts the car on the other end.
    package func open() throws -> (fd: Int32, progress: ConnectProgress) {
        var fds: [Int32] = [-1, -1]
        let socketType = SocketSupport.streamSocketType
        guard socketpair(AF_UNIX, socketType, 0, &fds) == 0 else {
            throw LinkFailure("cannot create the simulated car's socket pair (\(SocketSupport.reason(Glibc.errno)))")
        }
        session?.close()
        let car = CarSimulatorSession(fd: fds[1], name: "sim", loop: loop, options: options)
        session = car
        onSession?(car)
        do {
            try car.start()
        } catch {
            car.close()
            Syscall.close(fds[0])
            throw LinkFailure("cannot start the simulated car (\(error))")
        }
        return (fds[0], .connected)
    }

    /// Never called: a socketpair is connected at once.
    package func finishConnect(_ fd: Int32) throws {}

    /// `SIOCOUTQ` on an AF_UNIX socket counts buffer memory, not payload.
    package var queuedBytesArePayload: Bool { false }

    /// The simulated car went away.
    package func lossSentence(_ error: SystemError) -> String {
        "the simulated car failed (\(SocketSupport.reason(error.errno)))"
    }

    /// `send` with MSG_NOSIGNAL.
    package func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        try SocketSupport.send(fd, bytes)
    }
}

/// The `sim` link: a normal `StreamLink` to an in-process car, so its status lines and
/// "what the car does" lines come back as car lines.
package typealias SimulatedCarLink = StreamLink<SocketPairCarConnector>

extension SupervisedLink where Transport == StreamTransport<SocketPairCarConnector> {
    /// Creates a link to an in-process simulated car on `loop`.
    package convenience init(
        simulatedOn loop: EventLoop, encoder: FrameEncoder = FrameEncoder(),
        options: CarSimulatorSession.Options = .init()
    ) {
        self.init(
            connector: SocketPairCarConnector(loop: loop, options: options), loop: loop, encoder: encoder,
            options: LinkOptions())
    }

    /// The simulated car's current session.
    package var car: CarSimulatorSession? { transport.connector.session }
}
