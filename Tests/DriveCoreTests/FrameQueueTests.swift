import DriveCore
import XCTest

final class FrameQueueTests: XCTestCase {
    private let encoder = FrameEncoder()

    private func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    func testEmptyQueueHasNothingToWrite() {
        let queue = FrameQueue(encoder: encoder)
        XCTAssertFalse(queue.hasPendingBytes)
        XCTAssertEqual(queue.nextBytes().count, 0)
        XCTAssertEqual(queue.pendingFrames, [])
    }

    func testNewMotionFrameReplacesPendingMotionFrame() {
        var queue = FrameQueue(encoder: encoder)
        queue.push(.motion(range: 0, speed: 10, direction: 1))
        queue.push(.motion(range: 0, speed: 20, direction: 1))
        queue.push(.motion(range: 1, speed: 30, direction: 1))
        XCTAssertEqual(queue.pendingFrames, [.motion(range: 1, speed: 30, direction: 1)])
        XCTAssertEqual(text(queue.nextBytes()), "R,1,30,1\n")
    }

    func testEngineAndFunctionFramesKeepTheirOrderAndMotionGoesToTheEnd() {
        var queue = FrameQueue(encoder: encoder)
        let f2 = Frame(kind: .f2, range: 0, speed: 10, direction: 1)
        let f3 = Frame(kind: .f3, range: 0, speed: 10, direction: 1)
        queue.push(.motion(range: 0, speed: 10, direction: 1))
        queue.push(f2)
        queue.push(.motion(range: 0, speed: 20, direction: 1))
        queue.push(f3)
        queue.push(.engineOff)
        queue.push(.motion(range: 0, speed: 0, direction: 1))
        XCTAssertEqual(queue.pendingFrames, [f2, f3, .engineOff, .motion(range: 0, speed: 0, direction: 1)])
        XCTAssertEqual(text(queue.nextBytes()), "G,0,10,1\nH,0,10,1\nE,0,0,0\nM,0,0,1\n")
    }

    func testPartlyWrittenFrameStaysInFlight() {
        var queue = FrameQueue(encoder: encoder)
        queue.push(.motion(range: 0, speed: 40, direction: 1))
        queue.consume(3)  // "M,0" is out
        XCTAssertTrue(queue.hasFrameInFlight)
        queue.push(.motion(range: 0, speed: 50, direction: 1))
        queue.push(.motion(range: 0, speed: 60, direction: 1))
        XCTAssertEqual(
            queue.pendingFrames,
            [.motion(range: 0, speed: 40, direction: 1), .motion(range: 0, speed: 60, direction: 1)])
        XCTAssertEqual(text(queue.nextBytes()), ",40,1\nM,0,60,1\n")
        XCTAssertEqual(queue.pendingByteCount, 15)
    }

    func testConsumeAcrossFrameBoundaries() {
        var queue = FrameQueue(encoder: encoder)
        queue.push(Frame(kind: .f1, range: 0, speed: 0, direction: 1))  // "F,0,0,1\n" = 8 bytes
        queue.push(.engineOff)  // 8 bytes
        queue.consume(10)
        XCTAssertEqual(queue.pendingFrames, [.engineOff])
        XCTAssertEqual(text(queue.nextBytes()), "0,0,0\n")
        queue.consume(6)
        XCTAssertFalse(queue.hasPendingBytes)
        queue.consume(5)  // more than pending: ignored
        XCTAssertFalse(queue.hasPendingBytes)
    }

    func testClearDropsEverythingIncludingTheFrameInFlight() {
        var queue = FrameQueue(encoder: encoder)
        queue.push(.engineOff)
        queue.consume(2)
        queue.push(.motion(range: 0, speed: 10, direction: 1))
        queue.clear()
        XCTAssertFalse(queue.hasPendingBytes)
        XCTAssertFalse(queue.hasFrameInFlight)
        queue.push(.motion(range: -1, speed: 10, direction: 0))
        XCTAssertEqual(text(queue.nextBytes()), "X,-1,10,0\n")
    }

    func testTerminatorComesFromTheEncoder() {
        var queue = FrameQueue(encoder: FrameEncoder(terminator: .carriageReturnLineFeed))
        queue.push(.engineOff)
        XCTAssertEqual(text(queue.nextBytes()), "E,0,0,0\r\n")
    }
}

final class FrameQueueChunkTests: XCTestCase {
    func testLongQueueIsHandedOutInChunksOfWholeFrames() {
        var queue = FrameQueue(encoder: FrameEncoder())
        for _ in 0..<1000 { queue.push(Frame(kind: .f1, range: 0, speed: 0, direction: 1)) }  // 8 bytes each
        let chunk = queue.nextBytes()
        XCTAssertEqual(chunk.count, FrameQueue.maximumChunkBytes)
        queue.consume(chunk.count)
        XCTAssertEqual(queue.pendingFrames.count, 1000 - FrameQueue.maximumChunkBytes / 8)
    }
}
