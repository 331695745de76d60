import CLinux
import CarSim
import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

final class SimulatedCarLinkTests: XCTestCase {
    /// `--battery 6.5`: a status line with the volts, two decimals, steady while the car stands still.
    func testTheBatteryIsReportedAsAStatusLine() throws {
        let loop = try EventLoop()
        let link = SimulatedCarLink(
            simulatedOn: loop, options: .init(statusInterval: .milliseconds(20), batteryVolts: 6.5, failsafe: nil))
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { recorder.lines.filter { $0.hasPrefix("BAT") }.count >= 3 })
        let battery = recorder.lines.filter { $0.hasPrefix("BAT") }
        XCTAssertEqual(Set(battery), ["BAT=6.50"], "\(battery)")
        XCTAssertEqual(CarStatusLine(battery[0])?.pairs.first?.number, 6.5, "a status line carbridge reads")
        XCTAssertEqual(link.car?.statusLine, "BAT=6.50")
        var done = false
        link.shutdown(flushWithin: .milliseconds(200)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
    }

    func testRoundTripThroughTheInProcessCar() throws {
        let loop = try EventLoop()
        // No failsafe: this test checks the car's action after waiting for a status line, and a
        // loaded machine must not let the 300 ms failsafe (CarVectorTests) change it meanwhile.
        let link = SimulatedCarLink(
            simulatedOn: loop, options: .init(statusInterval: .milliseconds(100), failsafe: nil))
        let recorder = LinkRecorder(link)
        var frames: [Frame] = []
        var violations: [String] = []
        link.transport.connector.onSession = { car in
            car.onFrame = { frame, _ in frames.append(frame) }
            car.onViolation = { reason, _ in violations.append(reason) }
        }
        link.start()
        XCTAssertEqual(link.state, .up)
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("OK carbridge car simulator ready") })

        link.send(.motion(range: 0, speed: 10, direction: 1))
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("CAR forward at 10") })
        link.send(.motion(range: 0, speed: 40, direction: 1))
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("ERR speed jumped from 10 to 40 (at most 10 per frame)") })
        // 8.00 V to start; the car moves from the first frame on, so a status line then says 0.01 V less.
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("BAT=7.99") })
        XCTAssertEqual(frames, [.motion(range: 0, speed: 10, direction: 1), .motion(range: 0, speed: 40, direction: 1)])
        XCTAssertEqual(violations, ["speed jumped from 10 to 40 (at most 10 per frame)"])
        XCTAssertEqual(link.car?.action, "forward at 40")

        link.send(.engineOff)
        var done = false
        link.shutdown(flushWithin: .seconds(1)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done && link.car?.isOpen == false })
        XCTAssertEqual(frames.last, .engineOff)
        XCTAssertEqual(link.state, .closed)
    }
}

final class CarSimulatorTests: XCTestCase {
    /// A blocking client socket connected to 127.0.0.1:port, then made non-blocking.
    private func connectClient(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, SocketSupport.streamSocketType & ~Int32(O_NONBLOCK), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 { throw SystemError(call: "connect", errno: errno) }
        try Syscall.setNonBlocking(fd)
        return fd
    }

    private func readAll(_ fd: Int32, into text: inout String) {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            text += String(decoding: buffer[..<n], as: UTF8.self)
        }
    }

    func testTCPCarParsesFramesAndReportsViolations() throws {
        let loop = try EventLoop()
        let simulator = CarSimulator(loop: loop, configuration: .init(session: .init(statusInterval: nil)))
        var frames: [Frame] = []
        var violations: [(String, String)] = []
        var events: [String] = []
        simulator.onFrame = { frame, _ in frames.append(frame) }
        simulator.onViolation = { violations.append(($0, $1)) }
        simulator.onEvent = { events.append($0) }
        try simulator.start()
        let port = try XCTUnwrap(simulator.boundPort)
        XCTAssertGreaterThan(port, 0)

        let link = TCPLink(connector: TCPConnector(host: "127.0.0.1", port: port), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { link.state == .up && simulator.sessions.count == 1 })
        link.send(.motion(range: 0, speed: 10, direction: 1))
        link.send(.motion(range: 1, speed: 20, direction: 1))
        XCTAssertTrue(try spin(loop) { frames.count == 2 })
        XCTAssertEqual(frames, [.motion(range: 0, speed: 10, direction: 1), .motion(range: 1, speed: 20, direction: 1)])
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("CAR forward-right at 20") })
        XCTAssertTrue(violations.isEmpty)

        // A bad frame from a raw client.
        let client = try connectClient(port: port)
        defer { Glibc.close(client) }
        _ = Array("M,0,45,1\nE,0,0,0\r\nE,0,0,0\n".utf8).withUnsafeBytes { Glibc.write(client, $0.baseAddress, $0.count) }
        XCTAssertTrue(try spin(loop) { violations.count == 2 })
        XCTAssertEqual(violations.map(\.0), ["speed 45 is not a multiple of 10", "E sent twice"])
        XCTAssertEqual(violations.map(\.1), ["M,0,45,1", "E,0,0,0"])
        var answer = ""
        XCTAssertTrue(try spin(loop) { readAll(client, into: &answer); return answer.contains("ERR E sent twice\n") })
        XCTAssertEqual(
            answer,
            "OK carbridge car simulator ready\nERR speed 45 is not a multiple of 10\nCAR engine off\nERR E sent twice\n")
        XCTAssertTrue(events.contains { $0.contains("connected") })

        var done = false
        link.shutdown(flushWithin: .seconds(1)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done && simulator.sessions.count == 1 })
        XCTAssertTrue(events.contains { $0.contains("the bridge closed the connection") })
        simulator.stop()
    }

    func testPtyCarIsASerialCar() throws {
        let loop = try EventLoop()
        let simulator = CarSimulator(
            loop: loop, configuration: .init(listenHost: nil, pty: true, session: .init(statusInterval: .milliseconds(100))))
        var frames: [Frame] = []
        var violations: [String] = []
        simulator.onFrame = { frame, _ in frames.append(frame) }
        simulator.onViolation = { reason, _ in violations.append(reason) }
        try simulator.start()
        XCTAssertNil(simulator.boundPort)
        let path = try XCTUnwrap(simulator.ptyPath)
        XCTAssertTrue(path.hasPrefix("/dev/pts/"))

        let link = SerialLink(connector: SerialConnector(path: path, baud: 115200), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertEqual(link.state, .up)
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("OK carbridge car simulator ready") })
        link.send(.motion(range: -2, speed: 10, direction: 0))
        link.send(Frame(kind: .f3, range: -2, speed: 10, direction: 0))
        link.send(.engineOff)
        link.send(.motion(range: 0, speed: 30, direction: 1))
        XCTAssertTrue(try spin(loop) { frames.count == 4 })
        XCTAssertEqual(frames[0], .motion(range: -2, speed: 10, direction: 0))
        XCTAssertEqual(frames[1].kind, .f3)
        XCTAssertEqual(violations, ["engine was off: speed must start again from 0 (got S=30)"])
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("CAR back-left at 10") && recorder.lines.contains("CAR F3 pressed") })
        XCTAssertTrue(try spin(loop) { recorder.lines.contains { $0.hasPrefix("BAT=") } })

        // The bridge goes away and comes back: the pty car is still there.
        var done = false
        link.shutdown(flushWithin: .milliseconds(200)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
        let again = SerialLink(connector: SerialConnector(path: path), loop: loop)
        again.start()
        XCTAssertEqual(again.state, .up)
        again.send(.motion(range: 0, speed: 0, direction: 1))
        XCTAssertTrue(try spin(loop) { frames.count == 5 })
        simulator.stop()
    }
}
