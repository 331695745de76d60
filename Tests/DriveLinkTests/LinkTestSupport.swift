import CLinux
import DriveCore
import DriveLink
import DriveSystem
import Glibc
import XCTest

/// A plain TCP server on 127.0.0.1 for link tests: accepts, records bytes, can write and close.
final class TestTCPServer {
    let loop: EventLoop
    private(set) var port: Int = 0
    private(set) var listenFD: Int32 = -1
    private(set) var clients: [Int32] = []
    private(set) var received: [UInt8] = []
    private(set) var acceptedCount = 0
    /// Bytes received on the current (last) connection.
    private(set) var receivedOnCurrent: [UInt8] = []
    private(set) var peerClosedCount = 0
    var readsEnabled = true

    init(loop: EventLoop, port: Int = 0) throws {
        self.loop = loop
        try listen(port: port)
    }

    deinit { closeAll() }

    var receivedText: String { String(decoding: received, as: UTF8.self) }
    var currentText: String { String(decoding: receivedOnCurrent, as: UTF8.self) }

    func listen(port wanted: Int) throws {
        let fd = socket(AF_INET, SocketSupport.streamSocketType, 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, 4)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(wanted).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 { throw SystemError(call: "bind", errno: errno) }
        try Syscall.retrying("listen") { Glibc.listen(fd, 4) }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: bound.sin_port))
        listenFD = fd
        try loop.watch(fd, for: .readable) { [weak self] _ in self?.acceptOne() }
    }

    private func acceptOne() {
        let fd = accept(listenFD, nil, nil)
        guard fd >= 0 else { return }
        try? Syscall.setNonBlocking(fd)
        clients.append(fd)
        acceptedCount += 1
        receivedOnCurrent = []
        try? loop.watch(fd, for: .readable) { [weak self] _ in self?.readFrom(fd) }
    }

    private func readFrom(_ fd: Int32) {
        guard readsEnabled else {
            loop.unwatch(fd)
            return
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                received += buffer[..<n]
                receivedOnCurrent += buffer[..<n]
                continue
            }
            if n == 0 {
                peerClosedCount += 1
                loop.unwatch(fd)
                Glibc.close(fd)
                clients.removeAll { $0 == fd }
            }
            return
        }
    }

    func write(_ text: String) {
        guard let fd = clients.last else { return XCTFail("no client to write to") }
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func closeClients() {
        for fd in clients {
            loop.unwatch(fd)
            Glibc.close(fd)
        }
        clients.removeAll()
    }

    func stopListening() {
        if listenFD >= 0 {
            loop.unwatch(listenFD)
            Glibc.close(listenFD)
            listenFD = -1
        }
    }

    func closeAll() {
        closeClients()
        stopListening()
    }
}

/// A port on 127.0.0.1 with nothing listening (bound then closed).
func unusedLoopbackPort() throws -> Int {
    let loop = try EventLoop()
    let server = try TestTCPServer(loop: loop)
    let port = server.port
    server.closeAll()
    return port
}
