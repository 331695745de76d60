import CLinux
import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

final class TCPLinkTests: XCTestCase {
    func testFramesArriveExactlyAndCarLinesAreDelivered() throws {
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        let link = TCPLink(connector: TCPConnector(host: "127.0.0.1", port: server.port), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { link.state == .up && server.acceptedCount == 1 })
        XCTAssertEqual(recorder.states, [.connecting, .up])
        XCTAssertEqual(link.name, "tcp://127.0.0.1:\(server.port)")

        link.send(.motion(range: 0, speed: 40, direction: 1))
        link.send(.motion(range: -1, speed: 30, direction: 0))
        link.send(Frame(kind: .f2, range: 0, speed: 0, direction: 1))
        XCTAssertTrue(try spin(loop) { server.receivedText.hasSuffix("G,0,0,1\n") })
        XCTAssertEqual(server.receivedText, "M,0,40,1\nX,-1,30,0\nG,0,0,1\n")

        server.write("OK\r\nBAT,8")
        server.write("7\n")
        XCTAssertTrue(try spin(loop) { recorder.lines.count == 2 })
        XCTAssertEqual(recorder.lines, ["OK", "BAT,87"])
    }

    func testNameResolutionOfLocalhost() throws {
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        let link = TCPLink(connector: TCPConnector(host: "localhost", port: server.port), loop: loop)
        link.start()
        // localhost may resolve to ::1 first, where nothing listens: the next attempt takes 127.0.0.1.
        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { link.state == .up && server.acceptedCount == 1 })
    }

    func testLossThenReconnectWhenTheCarListensAgain() throws {
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        let port = server.port
        let link = TCPLink(connector: TCPConnector(host: "127.0.0.1", port: port), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { link.state == .up && server.acceptedCount == 1 })

        server.closeAll()
        XCTAssertTrue(try spin(loop) { !recorder.downReasons.isEmpty })
        XCTAssertEqual(recorder.downReasons.first, "the car closed the connection (tcp://127.0.0.1:\(port))")
        XCTAssertEqual(link.lastRetryDelay, .milliseconds(500))
        link.send(.motion(range: 0, speed: 10, direction: 1))  // dropped while down
        XCTAssertEqual(link.transport.pendingFrames, [])

        try server.listen(port: port)
        XCTAssertTrue(try spin(loop) { link.state == .up && server.acceptedCount == 2 })
        XCTAssertEqual(link.connectionsMade, 2)
        link.send(.motion(range: 0, speed: 0, direction: 1))
        XCTAssertTrue(try spin(loop) { server.currentText == "M,0,0,1\n" })
    }

    func testConnectionRefusedBacksOff() throws {
        let loop = try EventLoop()
        let port = try unusedLoopbackPort()
        let link = TCPLink(connector: TCPConnector(host: "127.0.0.1", port: port), loop: loop)
        var delays: [Duration] = []
        var reasons: [String] = []
        link.onStateChange = { state in
            if case .down(let reason) = state {
                reasons.append(reason)
                if let delay = link.lastRetryDelay { delays.append(delay) }
            }
        }
        link.start()
        XCTAssertTrue(try spin(loop, timeout: .seconds(5)) { delays.count >= 3 })
        XCTAssertEqual(Array(delays.prefix(3)), [.milliseconds(500), .seconds(1), .seconds(2)])
        XCTAssertEqual(
            reasons.first,
            "nothing is listening on 127.0.0.1:\(port) (connection refused): start the car or `carbridge car-sim`, or fix the address")
        XCTAssertEqual(link.connectionsMade, 0)
    }

    func testShutdownFlushesEngineOffBeforeClosing() throws {
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        let link = TCPLink(connector: TCPConnector(host: "127.0.0.1", port: server.port), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { link.state == .up })
        link.send(.motion(range: 0, speed: 20, direction: 1))
        link.send(.engineOff)
        var done = false
        link.shutdown(flushWithin: .seconds(1)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done && server.peerClosedCount == 1 })
        XCTAssertEqual(server.receivedText, "M,0,20,1\nE,0,0,0\n")
        XCTAssertEqual(link.state, .closed)
        XCTAssertEqual(recorder.states.last, .closed)
        // No reconnect after shutdown.
        try loop.run(until: loop.now().advanced(by: .milliseconds(700)))
        XCTAssertEqual(server.acceptedCount, 1)
        link.send(.engineOff)
        XCTAssertEqual(link.transport.pendingFrames, [])
    }

    func testShutdownWhileDownStopsReconnecting() throws {
        let loop = try EventLoop()
        let link = TCPLink(connector: TCPConnector(host: "127.0.0.1", port: try unusedLoopbackPort()), loop: loop)
        link.start()
        XCTAssertTrue(try spin(loop) { if case .down = link.state { return true } else { return false } })
        var done = false
        link.shutdown(flushWithin: .seconds(1)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
        let attempts = link.connectAttempts
        try loop.run(until: loop.now().advanced(by: .milliseconds(700)))
        XCTAssertEqual(link.connectAttempts, attempts)
        XCTAssertEqual(link.state, .closed)
    }

    func testConnectTimeoutWhenNobodyAnswers() throws {
        // A listener with a full backlog that never accepts: SYNs are dropped, the connect hangs.
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        loop.unwatch(server.listenFD)
        _ = Glibc.listen(server.listenFD, 0)
        var fillers: [Int32] = []
        defer { fillers.forEach { Glibc.close($0) } }
        for _ in 0..<4 {
            let fd = socket(AF_INET, SocketSupport.streamSocketType, 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(server.port).bigEndian)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(fd)
        }
        let link = TCPLink(
            connector: TCPConnector(host: "127.0.0.1", port: server.port), loop: loop,
            options: LinkOptions(connectTimeout: .milliseconds(300)))
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { !recorder.downReasons.isEmpty })
        if link.connectionsMade == 0 {
            XCTAssertEqual(
                recorder.downReasons.first,
                "no answer from tcp://127.0.0.1:\(server.port) within 0.3 s: check that the car is on and reachable")
        }
    }
}

/// A connector over a socketpair whose far end the test holds (small buffers, for stalls).
final class PairConnector: StreamConnector {
    let name = "pair"
    var peer: Int32 = -1

    func open() throws -> (fd: Int32, progress: ConnectProgress) {
        (try openSocketPair(replacing: &peer, buffer: 1024), .connected)
    }

    func finishConnect(_ fd: Int32) throws {}
    func lossSentence(_ error: SystemError) -> String { "pair lost: \(error.errno)" }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? { try SocketSupport.send(fd, bytes) }
    var queuedBytesArePayload: Bool { false }
}

final class StreamLinkStallTests: XCTestCase {
    func testFullSocketCoalescesMotionAndKeepsFunctionFramesThenStalls() throws {
        let loop = try EventLoop()
        let connector = PairConnector()
        let link = StreamLink(connector: connector, loop: loop)
        link.transport.options.stallTimeout = .milliseconds(300)
        let recorder = LinkRecorder(link)
        link.start()
        defer { Glibc.close(connector.peer) }
        XCTAssertEqual(link.state, .up)
        var sentFunctionFrames = 0
        while link.transport.pendingFrames.isEmpty && sentFunctionFrames < 100_000 {
            link.send(Frame(kind: .f1, range: 0, speed: 0, direction: 1))
            sentFunctionFrames += 1
        }
        XCTAssertFalse(link.transport.pendingFrames.isEmpty, "the socket never filled up")
        let queuedBefore = link.transport.pendingFrames.count
        for speed in stride(from: 10, through: 100, by: 10) { link.send(.motion(range: 0, speed: speed, direction: 1)) }
        link.send(.engineOff)
        link.send(.motion(range: 0, speed: 0, direction: 1))
        XCTAssertEqual(link.transport.pendingFrames.count, queuedBefore + 2)
        XCTAssertEqual(Array(link.transport.pendingFrames.suffix(2)), [.engineOff, .motion(range: 0, speed: 0, direction: 1)])

        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { !recorder.downReasons.isEmpty })
        XCTAssertEqual(recorder.downReasons.first, "the car has taken no data for 0.3 s (link stalled on pair); closed so nothing queued arrives late")
        XCTAssertEqual(link.transport.pendingFrames, [])
    }

    func testTheTunedSocketRetransmitsLinearlyAsAThinStream() throws {
        let fd = socket(AF_INET, SocketSupport.streamSocketType, 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { Glibc.close(fd) }
        TCPConnector(host: "127.0.0.1", port: 9).tune(fd, options: LinkOptions())
        XCTAssertEqual(SocketSupport.option(fd, Int32(IPPROTO_TCP), TCP_THIN_LINEAR_TIMEOUTS), 1)
        var name = [CChar](repeating: 0, count: 16)
        var length = socklen_t(name.count)
        XCTAssertEqual(getsockopt(fd, Int32(IPPROTO_TCP), TCP_CONGESTION, &name, &length), 0)
        let algorithm = String(decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        XCTAssertEqual(algorithm, "reno", "BBR keeps the stream out of the kernel's thin-stream rules")
    }
}
