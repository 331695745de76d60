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
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(pipe.read, $0.baseAddress, $0.count) }
        let lines = String(decoding: buffer[..<max(0, n)], as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2)
        let fields = lines[0].split(separator: " ")
        XCTAssertEqual(fields.count, 2)
        XCTAssertEqual(fields[1], "M,0,40,1")
        XCTAssertTrue(lines[1].hasSuffix(" E,0,0,0"))
        let time = fields[0].split(separator: ".")
        XCTAssertEqual(time.count, 2)
        XCTAssertEqual(time[1].count, 3)
        let seconds = try XCTUnwrap(Double(String(fields[0])))
        XCTAssertEqual(seconds, before.seconds, accuracy: 1.0)

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
