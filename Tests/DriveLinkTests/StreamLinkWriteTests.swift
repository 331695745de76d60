import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

/// A socketpair connector whose writes follow a script, to make the kernel take a frame in part or not at
/// all: each write takes the next entry (nil: `EAGAIN`, nothing written; n: at most n bytes), then
/// everything once the script is used up.
final class ChokedConnector: StreamConnector {
    let name = "choked"
    var peer: Int32 = -1
    var script: [Int?] = []
    private(set) var writeCalls = 0

    func open() throws -> (fd: Int32, progress: ConnectProgress) {
        (try openSocketPair(replacing: &peer), .connected)
    }

    func finishConnect(_ fd: Int32) throws {}
    func lossSentence(_ error: SystemError) -> String { "lost: \(error.errno)" }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        writeCalls += 1
        guard !script.isEmpty else { return try SocketSupport.send(fd, bytes) }
        guard let limit = script.removeFirst() else { return nil }
        return try SocketSupport.send(fd, UnsafeRawBufferPointer(rebasing: bytes.prefix(limit)))
    }
    var queuedBytesArePayload: Bool { false }
}

/// A frame that nothing waits before goes from the stack to the kernel without the queue; what the kernel
/// does not take must then wait in the queue exactly as a queued frame would: the car receives every byte
/// once, in order, never half a frame followed by another.
final class StreamLinkWriteTests: XCTestCase {
    private func upLink() throws -> (EventLoop, ChokedConnector, StreamLink<ChokedConnector>) {
        let loop = try makeManualLoop()
        let connector = ChokedConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 64))
        link.start()
        XCTAssertEqual(link.state, .up)
        return (loop, connector, link)
    }

    func testAFrameTheKernelTakesInPartLeavesTheRestAtOnce() throws {
        let (_, connector, link) = try upLink()
        defer { Glibc.close(connector.peer) }
        connector.script = [3]
        link.send(.engineOff)
        XCTAssertEqual(connector.writeCalls, 2, "the first 3 bytes, then the rest in the same send")
        XCTAssertEqual(link.transport.pendingFrames, [])
        XCTAssertEqual(link.transport.framesInKernel, 1)
        XCTAssertEqual(readText(until: connector.peer), "E,0,0,0\n")
    }

    func testAFrameTheKernelRefusesWaitsForWritableAndThenGoes() throws {
        let (loop, connector, link) = try upLink()
        defer { Glibc.close(connector.peer) }
        connector.script = [nil]
        link.send(.motion(range: 0, speed: 10, direction: 1))
        XCTAssertEqual(link.transport.pendingFrames, [.motion(range: 0, speed: 10, direction: 1)], "it waits in the queue")
        XCTAssertEqual(link.transport.framesInKernel, 0)
        XCTAssertTrue(try spin(loop, timeout: .milliseconds(100)) { link.transport.pendingFrames.isEmpty }, "the writable fd wrote it")
        XCTAssertEqual(readText(until: connector.peer), "M,0,10,1\n")
        XCTAssertEqual(link.transport.framesInKernel, 1)
    }

    func testAPartFrameStaysInFlightAndANewerMotionFrameFollowsIt() throws {
        let (loop, connector, link) = try upLink()
        defer { Glibc.close(connector.peer) }
        connector.script = [4, nil, nil, nil]  // and the kernel refuses the two sends that follow
        link.send(.motion(range: 0, speed: 20, direction: 1))
        XCTAssertEqual(link.transport.pendingFrames, [.motion(range: 0, speed: 20, direction: 1)], "in flight: 4 bytes written")
        link.send(.motion(range: 0, speed: 30, direction: 1))
        link.send(.motion(range: 0, speed: 40, direction: 1))
        XCTAssertEqual(link.transport.pendingFrames, [.motion(range: 0, speed: 20, direction: 1), .motion(range: 0, speed: 40, direction: 1)],
                       "the frame in flight is not replaced; the newest motion frame replaces the one waiting")
        XCTAssertTrue(try spin(loop, timeout: .milliseconds(100)) { link.transport.pendingFrames.isEmpty })
        XCTAssertEqual(readText(until: connector.peer), "M,0,20,1\nM,0,40,1\n")
        link.send(.engineOff)
        XCTAssertEqual(readText(until: connector.peer), "E,0,0,0\n", "nothing waits: straight out again")
        XCTAssertEqual(link.holdStatistics?.coalescedFrames, 1)
        XCTAssertEqual(link.holdStatistics?.motionFramesWritten, 2)
    }
}
