import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

final class SerialLinkTests: XCTestCase {
    private var master: Int32 = -1
    private var slave: Int32 = -1
    private var path = ""

    override func setUpWithError() throws {
        var name = [CChar](repeating: 0, count: 4096)
        XCTAssertEqual(openpty(&master, &slave, &name, nil, nil), 0)
        path = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        try Syscall.setNonBlocking(master)
    }

    override func tearDown() {
        Syscall.close(master)
        Syscall.close(slave)
    }

    private func readMaster(_ loop: EventLoop, until suffix: String) throws -> String {
        var text = ""
        _ = try spin(loop) {
            var buffer = [UInt8](repeating: 0, count: 1024)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if n > 0 { text += String(decoding: buffer[..<n], as: UTF8.self) }
            return text.hasSuffix(suffix)
        }
        return text
    }

    func testFramesReachTheMasterAndLinesComeBackAtTheBaudRate() throws {
        let loop = try EventLoop()
        let link = SerialLink(connector: SerialConnector(path: path, baud: 19200), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertEqual(link.state, .up)
        XCTAssertEqual(link.name, "serial://\(path)?baud=19200")

        var settings = termios()
        XCTAssertEqual(tcgetattr(slave, &settings), 0)
        XCTAssertEqual(cfgetospeed(&settings), speed_t(B19200))
        XCTAssertEqual(cfgetispeed(&settings), speed_t(B19200))
        XCTAssertEqual(settings.c_cflag & tcflag_t(CSIZE), tcflag_t(CS8))
        XCTAssertEqual(settings.c_lflag & tcflag_t(ICANON), 0)

        link.send(.motion(range: 2, speed: 180, direction: 1))
        link.send(.engineOff)
        XCTAssertEqual(try readMaster(loop, until: "E,0,0,0\n"), "R,2,180,1\nE,0,0,0\n")

        _ = Array("BAT,50\r\nOK\n".utf8).withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
        XCTAssertTrue(try spin(loop) { recorder.lines.count == 2 })
        XCTAssertEqual(recorder.lines, ["BAT,50", "OK"])

        var done = false
        link.shutdown(flushWithin: .milliseconds(500)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
        XCTAssertEqual(link.state, .closed)
    }

    func testMissingDeviceGoesDownWithAdviceAndRetries() throws {
        let loop = try EventLoop()
        let link = SerialLink(connector: SerialConnector(path: "/dev/carbridge-missing", baud: 9600), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertEqual(
            recorder.downReasons.first,
            "/dev/carbridge-missing does not exist: bind the paired car with `sudo rfcomm bind 0 AA:BB:CC:DD:EE:FF` or plug in the adapter")
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { link.connectAttempts >= 2 })
    }

    func testNotATerminal() throws {
        let loop = try EventLoop()
        let link = SerialLink(connector: SerialConnector(path: "/dev/null"), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertEqual(recorder.downReasons.first, "/dev/null is not a serial device (not a tty)")
    }
}

/// A serial "car" that stops reading (the pty master is never read) while output is queued:
/// losing or shutting down the link returns at once (`tcflush` before every close), never waiting
/// for the line to drain (a real serial driver's `closing_wait` is up to 30 s).
final class SerialStallTests: XCTestCase {
    private func stalledLink(_ loop: EventLoop) throws -> (link: SerialLink, master: Int32, slave: Int32) {
        var master: Int32 = -1
        var slave: Int32 = -1
        var name = [CChar](repeating: 0, count: 4096)
        XCTAssertEqual(openpty(&master, &slave, &name, nil, nil), 0)
        let path = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let link = SerialLink(
            connector: SerialConnector(path: path, baud: 115200), loop: loop,
            options: LinkOptions(stallTimeout: .milliseconds(300)))
        link.start()
        XCTAssertEqual(link.state, .up)
        // F frames always go to the kernel: fill the tty's output until writes would block.
        for index in 0..<20_000 { link.send(Frame(kind: index % 2 == 0 ? .f1 : .f2, range: 0, speed: 0, direction: 1)) }
        XCTAssertFalse(link.transport.pendingFrames.isEmpty, "the tty took everything: nothing is stalled")
        return (link, master, slave)
    }

    func testShuttingDownAStalledSerialLinkReturnsQuickly() throws {
        let loop = try EventLoop()
        let (link, master, slave) = try stalledLink(loop)
        defer { Syscall.close(master); Syscall.close(slave) }
        var result: FlushResult?
        let started = loop.now()
        link.shutdown(flushWithin: .milliseconds(100)) { result = $0 }
        XCTAssertTrue(try spin(loop, timeout: .seconds(5)) { result != nil })
        let took = loop.now().duration(since: started)
        print("SerialStallTests: shutdown of a stalled serial link took \(took)")
        XCTAssertEqual(result, .timedOut)
        XCTAssertLessThan(took, .milliseconds(1500))
    }

    func testLosingAStalledSerialLinkReturnsQuickly() throws {
        let loop = try EventLoop()
        var (link, master, slave) = try stalledLink(loop)
        defer { Syscall.close(master); Syscall.close(slave) }
        let recorder = LinkRecorder(link)
        // The car side goes away with the output still queued (a USB adapter pulled, the rfcomm
        // link dropping): the link is lost and its tty closed at once.
        let started = loop.now()
        Syscall.close(master)
        master = -1
        XCTAssertTrue(try spin(loop, timeout: .seconds(5)) { !recorder.downReasons.isEmpty })
        let took = loop.now().duration(since: started)
        print("SerialStallTests: link lost and the tty closed \(took) after the hang-up, output still queued")
        XCTAssertLessThan(took, .milliseconds(1500), "\(recorder.downReasons)")
        link.shutdown(flushWithin: .zero) { _ in }
    }

    func testReleasingAStalledSerialLinkReturnsQuickly() throws {
        let loop = try EventLoop()
        var (link, master, slave): (SerialLink?, Int32, Int32) = try stalledLink(loop)
        defer { Syscall.close(master); Syscall.close(slave) }
        XCTAssertNotNil(link)
        let started = loop.now()
        link = nil  // deinit closes the tty
        XCTAssertLessThan(loop.now().duration(since: started), .milliseconds(1500))
    }
}
