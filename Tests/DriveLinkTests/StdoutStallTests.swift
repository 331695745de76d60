import CLinux
import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

/// `--link stdout` whose reader stalls: sending never blocks the loop, dropped frames are reported.
final class StdoutStallTests: XCTestCase {
    /// Collects what a late reader finds in the pipe.
    final class LateReader: @unchecked Sendable {
        private let lock = ConditionLock()
        private var bytes: [UInt8] = []
        private var released = false
        var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }

        /// Starts reading `fd` once `release()` is called, or at `latest` (so old, blocking code,
        /// whose blocked send keeps the test from releasing it, ends instead of hanging forever).
        func start(fd: Int32, latest: Instant) throws {
            try BackgroundThread.start { [self] in
                lock.withLock {
                    while !released { if !lock.wait(until: latest) { break } }
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                    if n <= 0 { return }
                    lock.withLock { bytes += buffer[..<n]; lock.broadcast() }
                }
            }
        }

        /// Lets the reader start.
        func release() { lock.withLock { released = true; lock.broadcast() } }

        /// Waits until what was read so far satisfies `condition` or `deadline` passes; whether it does.
        func wait(until deadline: Instant, for condition: (String) -> Bool) -> Bool {
            lock.withLock {
                while !condition(String(decoding: bytes, as: UTF8.self)) {
                    if !lock.wait(until: deadline) { return condition(String(decoding: bytes, as: UTF8.self)) }
                }
                return true
            }
        }
    }

    func testAStalledReaderNeverBlocksSendAndDroppedFramesAreReported() throws {
        let loop = try EventLoop()
        let pipe = try Syscall.pipe(nonBlocking: false)
        defer { Syscall.close(pipe.write) }
        // Fill the pipe, as a reader that stopped reading leaves it.
        _ = cb_fcntl_set(pipe.write, 1031, 4096)  // F_SETPIPE_SZ (needs _GNU_SOURCE in C)
        try Syscall.setNonBlocking(pipe.write)
        let junk = [UInt8](repeating: UInt8(ascii: "#"), count: 1023) + [10]
        while (try? junk.withUnsafeBytes { try Syscall.write(pipe.write, $0) }) != nil {}
        try Syscall.setNonBlocking(pipe.write, false)
        let reader = LateReader()
        try reader.start(fd: pipe.read, latest: loop.now().advanced(by: .seconds(2)))

        let link = StdoutLink(loop: loop, fd: pipe.write)
        link.start()
        let started = loop.now()
        for speed in stride(from: 0, to: 2000, by: 10) {
            link.send(.motion(range: 0, speed: speed % 240, direction: 1))
        }
        let took = loop.now().duration(since: started)
        XCTAssertLessThan(took, .milliseconds(500), "200 sends to a stalled stdout took \(took)")
        XCTAssertEqual(link.state, .up)

        // Once the reader catches up: the frames that fitted, then one line counting the rest.
        reader.release()
        let deadline = loop.now().advanced(by: .seconds(6))
        XCTAssertTrue(reader.wait(until: deadline) { $0.contains("dropped") }, reader.text)
        let lines = reader.text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertTrue(lines.contains("carbridge: 136 frames dropped (stdout was not being read)"), "\(lines)")
        XCTAssertEqual(lines.filter { $0.hasSuffix(",1") }.count, 64, "\(lines)")

        link.send(.engineOff)
        var result: FlushResult?
        link.shutdown(flushWithin: .seconds(1)) { result = $0 }
        XCTAssertTrue(try spin(loop) { result != nil })
        XCTAssertEqual(result, .delivered)
        XCTAssertTrue(reader.wait(until: deadline) { $0.hasSuffix(" E,0,0,0\n") }, reader.text)
    }
}
