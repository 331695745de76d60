import DriveRuntime
import DriveSystem
import Glibc
import XCTest

/// sd_notify(3)'s protocol without libsystemd: datagrams to a real AF_UNIX socket bound where
/// `NOTIFY_SOCKET` says (a path, an abstract name), and `WATCHDOG_USEC`/`WATCHDOG_PID` read as
/// `sd_watchdog_enabled` reads them.
final class SystemdNotifySocketTests: XCTestCase {
    /// A datagram socket bound to `address` (a path, or `@name`), as systemd's PID 1 binds its own.
    private final class Receiver {
        let fd: Int32
        init(address: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            XCTAssertGreaterThanOrEqual(fd, 0)
            var bytes = Array(address.utf8)
            if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
            var local = sockaddr_un()
            local.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &local.sun_path) { raw in
                for (index, byte) in bytes.enumerated() { raw[index] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
            let rc = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            if rc != 0 { throw SystemError(call: "bind \(address)", errno: errno) }
        }
        deinit { close(fd) }

        /// The next datagram (waits for it: the sender wrote it before this is called).
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 5000) == 1 else { return nil }
            let count = recv(fd, &buffer, buffer.count, 0)
            return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
        }
    }

    func testSendsOneDatagramToAPathSocket() throws {
        let path = "/tmp/carbridge-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(path) }
        let receiver = try Receiver(address: path)
        let socket = try XCTUnwrap(try SystemdNotifySocket.fromEnvironment { $0 == "NOTIFY_SOCKET" ? path : nil })
        try socket.send("READY=1\nSTATUS=link up")
        XCTAssertEqual(receiver.receive(), "READY=1\nSTATUS=link up")
        try socket.send("WATCHDOG=1")
        XCTAssertEqual(receiver.receive(), "WATCHDOG=1")
    }

    func testSendsToAnAbstractName() throws {
        let name = "@carbridge-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try Receiver(address: name)
        try SystemdNotifySocket(address: name).send("STOPPING=1")
        XCTAssertEqual(receiver.receive(), "STOPPING=1")
    }

    func testNoVariableNoSocketAndBadAddressesAreNamed() throws {
        XCTAssertNil(try SystemdNotifySocket.fromEnvironment { _ in nil })
        XCTAssertNil(try SystemdNotifySocket.fromEnvironment { _ in "" })
        XCTAssertThrowsError(try SystemdNotifySocket(address: "run/systemd/notify")) { error in
            XCTAssertEqual("\(error)", "NOTIFY_SOCKET=run/systemd/notify: not an absolute path or an @abstract socket name")
        }
        let long = "/" + String(repeating: "x", count: 200)
        XCTAssertThrowsError(try SystemdNotifySocket(address: long)) { error in
            XCTAssertEqual("\(error)", "NOTIFY_SOCKET=\(long): longer than a socket address (108 bytes)")
        }
    }

    func testASocketNobodyListensOnIsASystemError() throws {
        let socket = try SystemdNotifySocket(address: "/tmp/carbridge-notify-nobody-\(getpid())")
        XCTAssertThrowsError(try socket.send("READY=1")) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOENT, "\(error)")
        }
    }

    func testWatchdogTimeoutIsThisProcessesOnly() throws {
        func timeout(_ values: [String: String], pid: pid_t = 4242) throws -> Duration? {
            try SystemdNotifySocket.watchdogTimeout({ values[$0] }, pid: pid)
        }
        XCTAssertNil(try timeout([:]))
        XCTAssertEqual(try timeout(["WATCHDOG_USEC": "20000000"]), .seconds(20))
        XCTAssertEqual(try timeout(["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "4242"]), .seconds(3))
        XCTAssertNil(try timeout(["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "1"]), "a parent's watchdog")
        XCTAssertThrowsError(try timeout(["WATCHDOG_USEC": "0"])) { error in
            XCTAssertEqual("\(error)", "WATCHDOG_USEC=0: not a positive number of microseconds")
        }
        XCTAssertThrowsError(try timeout(["WATCHDOG_USEC": "20s"]))
        XCTAssertThrowsError(try timeout(["WATCHDOG_USEC": "1000", "WATCHDOG_PID": "me"])) { error in
            XCTAssertEqual("\(error)", "WATCHDOG_PID=me: not a process ID")
        }
    }
}
