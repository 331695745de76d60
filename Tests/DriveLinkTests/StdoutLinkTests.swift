import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

final class StdoutLinkTests: XCTestCase {
    func testEachFrameIsPrintedWithMonotonicSecondsAndMilliseconds() throws {
        let loop = try EventLoop()
        let pipe = try Syscall.pipe(nonBlocking: false)
        defer {
            Syscall.close(pipe.read)
            Syscall.close(pipe.write)
        }
        let link = StdoutLink(loop: loop, fd: pipe.write)
        XCTAssertEqual(link.state, .up)
        link.start()
        let before = loop.now()
        link.send(.motion(range: 0, speed: 40, direction: 1))
        link.send(.engineOff)
        // The writer's thread may write the two lines with one write(2) or two: read until both are in.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        let readDeadline = loop.now().advanced(by: .seconds(5))
        while received.filter({ $0 == 10 }).count < 2 && loop.now() < readDeadline {
            var pfd = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) == 1 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(pipe.read, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received += buffer[..<n]
        }
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        let fields = lines.first?.split(separator: " ") ?? []
        XCTAssertEqual(fields.count, 2)
        XCTAssertEqual(fields.last, "M,0,40,1")
        XCTAssertTrue(lines.last?.hasSuffix(" E,0,0,0") ?? false)
        let time = fields.first?.split(separator: ".") ?? []
        XCTAssertEqual(time.count, 2)
        XCTAssertEqual(time.last?.count, 3)
        let seconds = try XCTUnwrap(fields.first.flatMap { Double(String($0)) })
        XCTAssertEqual(seconds, before.seconds, accuracy: 1.0)

        // Shut down before the pipe closes (the writer thread must be done with it).
        var done = false
        link.shutdown(flushWithin: .zero) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
        XCTAssertEqual(link.state, .closed)
    }

    func testLineFormatPadsMilliseconds() {
        XCTAssertEqual(StdoutLink.line(for: .engineOff, at: .milliseconds(12_005)), "12.005 E,0,0,0\n")
        XCTAssertEqual(StdoutLink.line(for: .engineOff, at: .milliseconds(3_450)), "3.450 E,0,0,0\n")
    }
}
