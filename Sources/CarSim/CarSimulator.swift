import DriveCore
import DriveLink
import DriveSystem
import Glibc

/// A simulated car for `carbridge car-sim` and tests: listens on TCP and/or exposes a pty as a
/// serial car, and serves each connection with a `CarSimulatorSession`. Nothing is printed here.
package final class CarSimulator {
    /// Where the car listens and how it behaves.
    package struct Configuration: Hashable, Sendable {
        /// The TCP host to listen on; nil = no TCP.
        package var listenHost: String?
        /// The TCP port; 0 = any free port (see `boundPort`).
        package var listenPort: Int
        /// Also expose a pty whose slave path is the serial car (see `ptyPath`).
        package var pty: Bool
        /// How each session behaves.
        package var session: CarSimulatorSession.Options

        /// Creates a configuration; default: TCP on 127.0.0.1, any port, no pty.
        package init(
            listenHost: String? = "127.0.0.1", listenPort: Int = 0, pty: Bool = false,
            session: CarSimulatorSession.Options = .init()
        ) {
            self.listenHost = listenHost
            self.listenPort = listenPort
            self.pty = pty
            self.session = session
        }
    }

    /// Called for every valid frame from any connection.
    package var onFrame: ((Frame, Instant) -> Void)?
    /// Called for every broken rule: the reason and the offending line.
    package var onViolation: ((String, String) -> Void)?
    /// Called for connections, disconnections and changes of what the car does.
    package var onEvent: ((String) -> Void)?
    /// The TCP port actually bound, once started.
    package private(set) var boundPort: Int?
    /// The pty's slave path (the serial car), once started.
    package private(set) var ptyPath: String?
    /// The sessions currently open.
    package private(set) var sessions: [CarSimulatorSession] = []

    private let loop: EventLoop
    private let configuration: Configuration
    private var listenFD: Int32 = -1
    private var ptyMasterFD: Int32 = -1
    private var ptySlaveFD: Int32 = -1

    /// Creates a simulator; `start()` opens its sockets.
    package init(loop: EventLoop, configuration: Configuration = .init()) {
        self.loop = loop
        self.configuration = configuration
    }

    deinit { stop() }

    /// Listens and/or opens the pty; throws `LinkFailure` with a clear sentence.
    package func start() throws {
        if let host = configuration.listenHost { try listen(host: host, port: configuration.listenPort) }
        if configuration.pty { try openPTY() }
    }

    /// Closes every session, the listener and the pty.
    package func stop() {
        for session in sessions { session.close() }
        sessions.removeAll()
        if listenFD >= 0 {
            loop.unwatch(listenFD)
            Syscall.close(listenFD)
            listenFD = -1
        }
        if ptyMasterFD >= 0 {
            loop.unwatch(ptyMasterFD)
            Syscall.close(ptyMasterFD)
            ptyMasterFD = -1
        }
        Syscall.close(ptySlaveFD)
        ptySlaveFD = -1
    }

    /// Stops accepting TCP connections (open sessions go on).
    package func stopListening() {
        guard listenFD >= 0 else { return }
        loop.unwatch(listenFD)
        Syscall.close(listenFD)
        listenFD = -1
    }

    // MARK: TCP

    private func listen(host: String, port: Int) throws {
        let addresses = try SocketSupport.resolve(host: host, port: port, passive: true)
        guard let address = addresses.first else { throw LinkFailure("\"\(host)\" has no address to listen on") }
        let socketType = SocketSupport.streamSocketType
        let fd = socket(address.family, socketType, 0)
        if fd < 0 { throw LinkFailure("cannot create a TCP socket (\(SocketSupport.reason(Glibc.errno)))") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        if bound != 0 || Glibc.listen(fd, 8) != 0 {
            let code = Glibc.errno
            Syscall.close(fd)
            let hint = code == EADDRINUSE ? ": pick another port or stop the program using it" : ""
            throw LinkFailure("cannot listen on \(address.text) (\(SocketSupport.reason(code)))\(hint)", errno: code)
        }
        let local = SocketSupport.localAddress(of: fd)
        let text = local?.text ?? "?"
        boundPort = local?.port
        listenFD = fd
        try loop.watch(fd, for: .readable) { [weak self] _ in self?.acceptAll() }
        onEvent?("listening on tcp://\(text)")
    }

    private func acceptAll() {
        while listenFD >= 0 {
            let connection: (fd: Int32, peer: ResolvedAddress)
            do {
                guard let next = try SocketSupport.accept(listenFD) else { return }
                connection = next
            } catch {
                onEvent?("accept failed (\(SocketSupport.reason((error as? SystemError)?.errno ?? EIO)))")
                return
            }
            let session = CarSimulatorSession(
                fd: connection.fd, name: "tcp \(connection.peer.text)", loop: loop, options: configuration.session)
            adopt(session)
        }
    }

    // MARK: pty

    private func openPTY() throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        var name = [CChar](repeating: 0, count: 4096)
        // The slave stays open here, so the master never reports a hangup between bridge connections.
        guard openpty(&master, &slave, &name, nil, nil) == 0 else {
            throw LinkFailure("cannot open a pseudo-terminal (\(SocketSupport.reason(Glibc.errno)))")
        }
        let path = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        try? Syscall.setCloseOnExec(master)
        try? Syscall.setCloseOnExec(slave)
        var settings = termios()
        if tcgetattr(master, &settings) != 0 {
            let code = Glibc.errno
            Syscall.close(master)
            Syscall.close(slave)
            throw LinkFailure("cannot set up the pseudo-terminal \(path) (\(SocketSupport.reason(code)))")
        }
        cfmakeraw(&settings)
        _ = tcsetattr(master, TCSANOW, &settings)
        try? Syscall.setNonBlocking(master)
        ptyMasterFD = master
        ptySlaveFD = slave
        ptyPath = path
        let session = CarSimulatorSession(
            fd: master, name: "pty \(path)", loop: loop, options: configuration.session, closesFD: false)
        adopt(session)
        onEvent?("serial car on \(path)")
    }

    private func adopt(_ session: CarSimulatorSession) {
        session.onFrame = { [weak self] frame, time in self?.onFrame?(frame, time) }
        session.onViolation = { [weak self] reason, line in self?.onViolation?(reason, line) }
        session.onEvent = { [weak self] event in self?.onEvent?(event) }
        session.onClose = { [weak self, weak session] in
            guard let self, let session else { return }
            self.sessions.removeAll { $0 === session }
        }
        sessions.append(session)
        onEvent?("\(session.name): connected")
        do {
            try session.start()
        } catch {
            onEvent?("\(session.name): cannot serve (\(error))")
            session.close()
        }
    }
}
