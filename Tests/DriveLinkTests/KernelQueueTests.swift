import CLinux
import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

/// A socketpair link whose "kernel output queue" the test sets, to check the kernel-queue rule
/// (protocol §5.6) and the stall rule (§6) exactly: what is handed to the kernel and when. The loop runs
/// on a manual clock (the socketpair is still real and polled), so the stall timers take no wall time.
final class QueueConnector: StreamConnector {
    let name = "queue"
    var peer: Int32 = -1
    /// What `queuedBytes` answers (the test plays the kernel).
    var kernelQueued = 0
    /// How many times the link read the kernel queue (on RFCOMM each is an ioctl and a getsockopt).
    private(set) var queueReadings = 0
    private(set) var aborts = 0
    private(set) var writes: [String] = []

    func open() throws -> (fd: Int32, progress: ConnectProgress) {
        (try openSocketPair(replacing: &peer), .connected)
    }

    func finishConnect(_ fd: Int32) throws {}
    func lossSentence(_ error: SystemError) -> String { "lost: \(error.errno)" }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? {
        let count = try SocketSupport.send(fd, bytes)
        if let count, count > 0 {
            writes.append(String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: ["\n"]))
            kernelQueued += count
        }
        return count
    }
    func queuedBytes(_ fd: Int32) -> Int? {
        queueReadings += 1
        return kernelQueued
    }
    func prepareAbort(_ fd: Int32) { aborts += 1 }
}

private extension String {
    func trimmingCharacters(in set: Set<Character>) -> String {
        var text = self
        while let last = text.last, set.contains(last) { text.removeLast() }
        return text
    }
}

final class KernelQueueTests: XCTestCase {
    private func motion(_ speed: Int) -> Frame { .motion(range: 0, speed: speed, direction: 1) }

    /// A started link on a manual loop with 2 frames in flight and a 300 ms stall timeout.
    private func stallTestLink() throws -> (EventLoop, QueueConnector, StreamLink<QueueConnector>, LinkRecorder) {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(
            connector: connector, loop: loop, options: LinkOptions(maxInFlight: 2, stallTimeout: .milliseconds(300)))
        let recorder = LinkRecorder(link)
        link.start()
        return (loop, connector, link, recorder)
    }

    func testAtMostMaxInFlightMotionFramesReachTheKernelAndTheNewestWaits() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 2))
        link.start()
        defer { Glibc.close(connector.peer) }
        XCTAssertEqual(link.state, .up)

        for speed in stride(from: 10, through: 50, by: 10) { link.send(motion(speed)) }
        XCTAssertEqual(connector.writes, ["M,0,10,1", "M,0,20,1"], "only max_in_flight frames go to the kernel")
        XCTAssertEqual(link.transport.pendingFrames, [motion(50)], "the newest motion frame waits; older ones are gone")
        XCTAssertEqual(link.transport.framesInKernel, 2)

        // E and F frames are never held back or dropped, and keep their order.
        link.send(Frame(kind: .f1, range: 0, speed: 50, direction: 1))
        XCTAssertEqual(link.transport.pendingFrames, [motion(50), Frame(kind: .f1, range: 0, speed: 50, direction: 1)],
                       "the F frame keeps its place behind the held motion frame")

        // The car acknowledges one frame: the held frame goes at the next look, then the F frame.
        connector.kernelQueued -= 9
        XCTAssertTrue(try spin(loop, timeout: .milliseconds(500)) { link.transport.pendingFrames.isEmpty })
        XCTAssertEqual(connector.writes, ["M,0,10,1", "M,0,20,1", "M,0,50,1", "F,0,50,1"])
    }

    func testAQueueThatDoesNotDrainIsAStallAndTheLinkIsClosedAbortively() throws {
        let (loop, connector, link, recorder) = try stallTestLink()
        defer { Glibc.close(connector.peer) }
        let start = loop.now()
        link.send(motion(50))
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { !recorder.downReasons.isEmpty })
        XCTAssertEqual(loop.now().duration(since: start), .milliseconds(300), "the stall is noticed exactly at the stall timeout")
        XCTAssertTrue(recorder.downReasons.first?.contains("stalled") ?? false, "\(recorder.downReasons)")
        XCTAssertEqual(connector.aborts, 1, "a stalled link must be closed abortively (SO_LINGER 0 / tcflush)")
        XCTAssertEqual(link.stalls, 1)
    }

    /// A shutdown's flush lets its window decide, not the stall clock. When the stall moment came during the
    /// flush, the next look at the queue was scheduled at that same instant, again and again, inside one pass
    /// over the due timers (the turn's clock does not move): the loop spun and the shutdown never ended
    /// (seen once in a loaded CI run, in SerialStallTests; this test hung before the fix).
    func testAStallThatFallsDueDuringAShutdownFlushEndsAtTheFlushWindow() throws {
        let (loop, connector, link, recorder) = try stallTestLink()
        defer { Glibc.close(connector.peer) }
        let start = loop.now()
        link.send(motion(50))
        try loop.run(until: start.advanced(by: .milliseconds(250)))
        XCTAssertEqual(link.state, .up, "250 of the 300 ms: not a stall yet")
        var result: FlushResult?
        link.shutdown(flushWithin: .milliseconds(200)) { result = $0 }
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { result != nil })
        XCTAssertEqual(result, .timedOut)
        XCTAssertEqual(loop.now().duration(since: start), .milliseconds(450), "the flush window (250 + 200 ms) decides")
        XCTAssertEqual(link.state, .closed)
        XCTAssertEqual(recorder.downReasons.filter { $0.contains("stalled") }, [], "no stall while flushing")
    }

    func testAQueueThatKeepsDrainingIsNotAStall() throws {
        let (loop, connector, link, recorder) = try stallTestLink()
        defer { Glibc.close(connector.peer) }
        // A slow car: each frame is acknowledged 150 ms after it was sent, never all at once.
        var speed = 10
        let end = loop.now().advanced(by: .milliseconds(1_200))
        while loop.now() < end {
            link.send(motion(speed))
            speed = speed == 10 ? 20 : 10
            try loop.run(until: loop.now().advanced(by: .milliseconds(150)))
            connector.kernelQueued = max(0, connector.kernelQueued - 9)
        }
        XCTAssertEqual(recorder.downReasons, [], "a queue that shrinks is not a stall")
        XCTAssertEqual(link.state, .up)
    }

    func testIdleLinkArmsNoTimer() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions())
        link.start()
        defer { Glibc.close(connector.peer) }
        link.send(motion(10))
        connector.kernelQueued = 0
        try loop.run(until: loop.now().advanced(by: .milliseconds(200)))
        XCTAssertNil(loop.nextTimerDeadline, "nothing queued: no wake-ups")
    }

    func testTheKernelQueueIsReadAtMostOncePerFrameSent() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 2))
        link.start()
        defer { Glibc.close(connector.peer) }

        // A stream the car keeps up with: every send writes its frame after one reading.
        for speed in stride(from: 10, through: 90, by: 10) {
            let before = connector.queueReadings
            let written = connector.writes.count
            link.send(motion(speed))
            XCTAssertEqual(connector.writes.count, written + 1, "the frame goes out")
            XCTAssertLessThanOrEqual(connector.queueReadings - before, 1, "one reading for frame \(speed)")
            connector.kernelQueued = 0
        }

        // A backlog: motion frames held, an F frame queued behind them; still one reading per send.
        connector.kernelQueued = 0
        for speed in [20, 30, 40, 50] {
            let before = connector.queueReadings
            link.send(motion(speed))
            XCTAssertLessThanOrEqual(connector.queueReadings - before, 1, "one reading for frame \(speed)")
        }
        let beforeF = connector.queueReadings
        link.send(Frame(kind: .f1, range: 0, speed: 50, direction: 1))
        XCTAssertLessThanOrEqual(connector.queueReadings - beforeF, 1)
        XCTAssertEqual(link.transport.pendingFrames, [motion(50), Frame(kind: .f1, range: 0, speed: 50, direction: 1)])

        // The car acknowledges everything: the next recheck reads once and sends the held frame and the F frame.
        connector.kernelQueued = 0
        let next = try XCTUnwrap(loop.nextTimerDeadline, "a held frame is looked at again")
        let beforeRecheck = connector.queueReadings
        try loop.run(until: next)
        XCTAssertEqual(link.transport.pendingFrames, [])
        XCTAssertEqual(Array(connector.writes.suffix(2)), ["M,0,50,1", "F,0,50,1"])
        XCTAssertEqual(connector.queueReadings - beforeRecheck, 1, "one reading for the recheck that sent two frames")
    }

    func testAHeldFrameLeavesWithinAMillisecondOfTheQueueHavingRoom() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 2))
        link.start()
        defer { Glibc.close(connector.peer) }
        // The car acknowledges one frame at instants that fall between any two fixed recheck ticks.
        for (index, ackAfter) in [Duration.microseconds(300), .microseconds(3_400), .microseconds(7_700), .milliseconds(42)]
            .enumerated()
        {
            connector.kernelQueued = 0
            try loop.run(until: loop.now().advanced(by: .milliseconds(100)))
            for speed in [10, 20, 30] { link.send(motion(speed + index)) }
            XCTAssertEqual(link.transport.pendingFrames, [motion(30 + index)], "the third frame is held")
            let written = connector.writes.count
            let ackAt = loop.now().advanced(by: ackAfter)
            _ = loop.schedule(at: ackAt) { connector.kernelQueued -= 9 }
            XCTAssertTrue(try spin(loop, timeout: .seconds(1)) { connector.writes.count > written })
            let delay = loop.now().duration(since: ackAt)
            XCTAssertLessThanOrEqual(delay, .milliseconds(1), "the held frame left \(delay) after the queue had room")
        }
    }

    func testShortRechecksOnlyWhileAFrameIsHeld() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 2))
        link.start()
        defer { Glibc.close(connector.peer) }
        // Two frames the car has not acknowledged, nothing held: only the stall watch looks at the queue.
        link.send(motion(10))
        link.send(motion(20))
        let before = connector.queueReadings
        try loop.run(until: loop.now().advanced(by: .milliseconds(200)))
        XCTAssertLessThanOrEqual(connector.queueReadings - before, 4, "every 50 ms while the kernel holds bytes")
    }

    func testASendReadsTheKernelQueueOnlyWhenTheBoundIsAtTheLimit() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 3))
        link.start()
        defer { Glibc.close(connector.peer) }
        // Frames written since the last reading count as in the kernel; below the limit no reading
        // could hold the next frame back, so none is taken (it was one ioctl per frame).
        let before = connector.queueReadings
        for speed in [10, 20, 30] { link.send(motion(speed)) }
        XCTAssertEqual(connector.writes, ["M,0,10,1", "M,0,20,1", "M,0,30,1"])
        XCTAssertEqual(connector.queueReadings - before, 0, "no reading while the bound allows the frame")
        // At the limit the send reads the queue: the car took two frames, so the fourth goes.
        connector.kernelQueued = 9
        link.send(motion(40))
        XCTAssertEqual(connector.queueReadings - before, 1)
        XCTAssertEqual(connector.writes.last, "M,0,40,1")
        // 30 and 40 in the kernel: 50 goes on the bound alone; 60 finds three frames there and is held.
        link.send(motion(50))
        XCTAssertEqual(connector.queueReadings - before, 1)
        link.send(motion(60))
        XCTAssertEqual(connector.queueReadings - before, 2)
        XCTAssertEqual(link.transport.pendingFrames, [motion(60)], "the rule holds the frame when the reading says so")
        XCTAssertEqual(link.transport.framesInKernel, 3)
    }

    func testHoldStatisticsCountCoalescedFramesAndTheHeldFramesWait() throws {
        let loop = try makeManualLoop()
        let connector = QueueConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions(maxInFlight: 2))
        link.start()
        defer { Glibc.close(connector.peer) }
        for speed in [10, 20, 30] { link.send(motion(speed)) }  // 30 is held
        try loop.run(until: loop.now().advanced(by: .microseconds(1_500)))
        let queuedAt = loop.now()
        link.send(motion(40))  // replaces the held 30
        let ackAt = queuedAt.advanced(by: .microseconds(2_500))
        _ = loop.schedule(at: ackAt) { connector.kernelQueued -= 9 }
        XCTAssertTrue(try spin(loop, timeout: .seconds(1)) { connector.writes.last == "M,0,40,1" })
        let statistics = try XCTUnwrap(link.holdStatistics)
        XCTAssertEqual(statistics.motionFramesWritten, 3)
        XCTAssertEqual(statistics.coalescedFrames, 1, "30 never went out")
        XCTAssertEqual(statistics.heldFramesWritten, 1)
        // From 40's queueing to its write: the ack after 2.5 ms, then at most one 1 ms recheck.
        let waited = statistics.maxWaitNanoseconds
        XCTAssertGreaterThanOrEqual(waited, 2_500_000)
        XCTAssertLessThanOrEqual(waited, 3_500_000)
        XCTAssertEqual(statistics.meanWaitNanoseconds, waited)
        XCTAssertEqual(statistics.medianWaitNanoseconds, (waited / 50_000 + 1) * 50_000, "the upper end of its 50 µs bucket")
        XCTAssertTrue(statistics.description.hasPrefix("3 motion frames written, 1 coalesced; 1 written after a hold (waited p50 "),
                      statistics.description)
    }
}

final class HoldStatisticsTests: XCTestCase {
    func testTheMedianIsTheUpperEndOfItsBucketAndLongWaitsShareTheLast() {
        var statistics = HoldStatistics()
        XCTAssertNil(statistics.medianWaitNanoseconds)
        statistics.wroteMotionFrame(waited: nil)
        for wait: Int64 in [120_000, 40_000, 990_000] { statistics.wroteMotionFrame(waited: wait) }
        XCTAssertEqual(statistics.motionFramesWritten, 4)
        XCTAssertEqual(statistics.heldFramesWritten, 3)
        XCTAssertEqual(statistics.medianWaitNanoseconds, 150_000, "120 µs lies in 100…150 µs")
        XCTAssertEqual(statistics.meanWaitNanoseconds, 383_333)
        for wait: Int64 in [25_000_000, 40_000_000, 31_000_000, 12_000_000] { statistics.wroteMotionFrame(waited: wait) }
        XCTAssertEqual(statistics.medianWaitNanoseconds, 40_000_000, "the 4th of 7 is 12 ms, past 10 ms: the longest wait")
        XCTAssertEqual(statistics.description,
                       "8 motion frames written, 0 coalesced; 7 written after a hold (waited p50 40.000 ms, mean 15.593 ms, max 40.000 ms)")
    }
}
