import DriveCore
import DriveInputModel
import DriveMapping
import DriveSystem
import Glibc
import XCTest

@testable import DriveInput

/// A real pipe on a manual-clock loop: the waits for "nothing more happens" take no wall time.
final class RawEvdevReaderTests: XCTestCase {
    let axes: [UInt16: AbsInfo] = [0: AbsInfo(minimum: -32768, maximum: 32767, flat: 128)]

    func testFramesFromRealInputEventBytesThroughAPipeAndOneGoneWhenTheWriterCloses() throws {
        let loop = try EventLoop(clock: .manual)
        let pipe = try Syscall.pipe()
        let reader = try RawEvdevReader(fd: pipe.read, loop: loop, absInfo: axes)
        var frames: [InputFrame] = []
        var goneReasons: [String] = []
        var rawEvents: [InputEvent] = []
        reader.onEvent = { rawEvents.append($0) }
        reader.onFrame = { frames.append($0) }
        reader.onGone = { goneReasons.append($0) }
        try reader.start()

        let first = InputEventDecoder.encode([
            TestSupport.abs(0, 1000), TestSupport.abs(0, 2000), TestSupport.abs(0, 32767), TestSupport.key(304, 1),
            TestSupport.syn,
        ])
        // Split the bytes mid-record: the reader must stitch them together.
        try Syscall.writeAll(pipe.write, Array(first[0..<30]))
        try TestSupport.run(loop, seconds: 0.2) { false }
        XCTAssertEqual(frames.count, 0)
        try Syscall.writeAll(pipe.write, Array(first[30...]))
        try TestSupport.run(loop) { frames.count == 1 }
        XCTAssertEqual(frames.first?.axes, [AxisValue(code: 0, value: 1, raw: 32767)])
        XCTAssertEqual(frames.first?.keys, [KeyChange(code: 304, pressed: true)])
        XCTAssertEqual(rawEvents.count, 5)

        try Syscall.writeAll(pipe.write, InputEventDecoder.encode([
            TestSupport.key(304, 2), TestSupport.syn,
            TestSupport.dropped, TestSupport.abs(0, -5), TestSupport.syn,
        ]))
        try TestSupport.run(loop) { frames.count == 2 }
        XCTAssertEqual(frames.last?.keys, [KeyChange(code: 304, pressed: false)], "SYN_DROPPED releases the keys that were down")
        XCTAssertEqual(reader.droppedCount, 1)

        Syscall.close(pipe.write)
        try TestSupport.run(loop) { !goneReasons.isEmpty }
        try TestSupport.run(loop, seconds: 0.1) { false }
        XCTAssertEqual(goneReasons, ["end of input"])
        XCTAssertFalse(reader.isOpen)
        XCTAssertFalse(loop.isWatching(pipe.read))
    }

    func testAFullBufferIsReadAgainInTheSameTurnAndTheNextReportWakesTheLoop() throws {
        let loop = try EventLoop(clock: .manual)
        let pipe = try Syscall.pipe()
        defer { Syscall.close(pipe.write) }
        let reader = try RawEvdevReader(fd: pipe.read, loop: loop, absInfo: axes)
        var frames: [InputFrame] = []
        reader.onFrame = { frames.append($0) }
        try reader.start()
        // 100 reports, 200 events: three buffers' worth (64 events each), written at once.
        var events: [InputEvent] = []
        for value in 1...100 { events += [TestSupport.abs(0, Int32(value * 300)), TestSupport.syn] }
        try Syscall.writeAll(pipe.write, InputEventDecoder.encode(events))
        let before = loop.wakeups
        try TestSupport.run(loop) { frames.count == 100 }
        XCTAssertEqual(loop.wakeups - before, 1, "a full read is followed by another in the same turn")
        XCTAssertEqual(frames.last?.axes.first?.raw, 30000)
        // The last read was short and ended the turn without a read that says EAGAIN; the next report wakes it.
        try Syscall.writeAll(pipe.write, InputEventDecoder.encode([TestSupport.abs(0, -300), TestSupport.syn]))
        try TestSupport.run(loop) { frames.count == 101 }
        XCTAssertEqual(frames.last?.axes.first?.raw, -300)
        XCTAssertEqual(loop.wakeups - before, 2)
    }

    func testCloseStopsWithoutGone() throws {
        let loop = try EventLoop(clock: .manual)
        let pipe = try Syscall.pipe()
        defer { Syscall.close(pipe.write) }
        let reader = try RawEvdevReader(fd: pipe.read, loop: loop, absInfo: axes)
        var gone = 0
        reader.onGone = { _ in gone += 1 }
        var frames = 0
        reader.onFrame = { _ in frames += 1 }
        try reader.start()
        try Syscall.writeAll(pipe.write, InputEventDecoder.encode([TestSupport.key(1, 1), TestSupport.syn]))
        reader.close()
        try TestSupport.run(loop, seconds: 0.1) { false }
        XCTAssertEqual(gone, 0)
        XCTAssertEqual(frames, 0)
        XCTAssertFalse(reader.isOpen)
        XCTAssertFalse(loop.isWatching(pipe.read))
    }
}
