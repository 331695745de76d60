import DriveCore
import DriveLink
import XCTest

/// The kernel-queue rule (protocol §5.6) and the stall rule (§6) as `KernelQueueAccounting` works
/// them out from readings of the queue, on exact instants: no socket, no loop.
final class KernelQueueAccountingTests: XCTestCase {
    private let frame = 9  // "M,0,50,1\n"

    private func accounting(payload: Bool = true, maxInFlight: Int = 2) -> KernelQueueAccounting {
        KernelQueueAccounting(
            at: .milliseconds(0), readingsArePayload: payload, maxInFlight: maxInFlight,
            stallTimeout: .seconds(1), heldRecheckInterval: .milliseconds(1), flushRecheckInterval: .milliseconds(10),
            queueRecheckInterval: .milliseconds(50))
    }

    func testPayloadReadingsTellWhichFramesTheKernelLetGoOf() {
        var queue = accounting()
        for _ in 0..<2 { queue.wrote(frame, completingFrame: true, at: .milliseconds(0)) }
        XCTAssertEqual(queue.framesInKernel, 2)
        XCTAssertFalse(queue.mayHandOverMotionFrame, "2 frames in the kernel: a third motion frame waits")
        XCTAssertEqual(queue.queuedBytes, 18, "written bytes count as queued until a reading says otherwise")

        queue.observe(queued: 12, at: .milliseconds(20), pendingInCarbridge: true)
        XCTAssertEqual(queue.framesInKernel, 2, "the first frame is only partly acknowledged (6 of 9 bytes)")
        queue.observe(queued: 9, at: .milliseconds(30), pendingInCarbridge: true)
        XCTAssertEqual(queue.framesInKernel, 1)
        XCTAssertTrue(queue.mayHandOverMotionFrame)
        queue.observe(queued: 0, at: .milliseconds(40), pendingInCarbridge: false)
        XCTAssertEqual(queue.framesInKernel, 0)
    }

    func testMemoryReadingsOnlyTellAnEmptyQueue() {
        var queue = accounting(payload: false)
        for _ in 0..<2 { queue.wrote(frame, completingFrame: true, at: .milliseconds(0)) }
        queue.observe(queued: 1, at: .milliseconds(10), pendingInCarbridge: true)
        XCTAssertEqual(queue.framesInKernel, 2, "buffer memory says nothing about which frame left")
        queue.observe(queued: 0, at: .milliseconds(20), pendingInCarbridge: true)
        XCTAssertEqual(queue.framesInKernel, 0)
    }

    func testAPartialWriteIsNotAFrameInTheKernel() {
        var queue = accounting(maxInFlight: 1)
        queue.wrote(4, completingFrame: false, at: .milliseconds(0))
        XCTAssertEqual(queue.framesInKernel, 0)
        queue.wrote(5, completingFrame: true, at: .milliseconds(1))
        XCTAssertEqual(queue.framesInKernel, 1)
        XCTAssertFalse(queue.mayHandOverMotionFrame)
    }

    func testMaxInFlightBelowOneStillLetsOneFrameGo() {
        var queue = accounting(maxInFlight: 0)
        XCTAssertTrue(queue.mayHandOverMotionFrame)
        queue.wrote(frame, completingFrame: true, at: .milliseconds(0))
        XCTAssertFalse(queue.mayHandOverMotionFrame)
    }

    func testTheStallClockStartsWhenBytesStartWaitingAndStopsAtTheTimeout() {
        var queue = accounting()
        queue.wrote(frame, completingFrame: true, at: .milliseconds(100))
        XCTAssertEqual(queue.lastDrain, .milliseconds(100), "an empty queue: the bytes start waiting now")
        queue.wrote(frame, completingFrame: true, at: .milliseconds(150))
        XCTAssertEqual(queue.lastDrain, .milliseconds(100), "the queue was not empty: the clock keeps running")
        queue.observe(queued: 18, at: .milliseconds(600), pendingInCarbridge: false)
        XCTAssertEqual(queue.lastDrain, .milliseconds(100), "a queue that did not shrink is no progress")
        XCTAssertFalse(queue.isStalled(at: .milliseconds(1_099), pendingInCarbridge: false))
        XCTAssertTrue(queue.isStalled(at: .milliseconds(1_100), pendingInCarbridge: false))
    }

    func testAQueueThatShrinksRestartsTheStallClock() {
        var queue = accounting()
        for _ in 0..<2 { queue.wrote(frame, completingFrame: true, at: .milliseconds(0)) }
        queue.observe(queued: 9, at: .milliseconds(700), pendingInCarbridge: false)
        XCTAssertEqual(queue.lastDrain, .milliseconds(700))
        XCTAssertFalse(queue.isStalled(at: .milliseconds(1_699), pendingInCarbridge: false))
        XCTAssertTrue(queue.isStalled(at: .milliseconds(1_700), pendingInCarbridge: false))
    }

    func testAnEmptyQueueIsProgressOnlyWhenNothingWaitsInCarbridge() {
        var queue = accounting()
        queue.observe(queued: 0, at: .milliseconds(500), pendingInCarbridge: true)
        XCTAssertEqual(queue.lastDrain, .milliseconds(0), "frames wait in carbridge: an empty kernel queue is no progress")
        XCTAssertTrue(queue.isStalled(at: .milliseconds(1_000), pendingInCarbridge: true))
        queue.observe(queued: 0, at: .milliseconds(800), pendingInCarbridge: false)
        XCTAssertEqual(queue.lastDrain, .milliseconds(800))
        XCTAssertFalse(queue.isStalled(at: .seconds(60), pendingInCarbridge: false), "nothing waits: never a stall")
    }

    func testBytesThatHadToWaitForABlockedWriteAreProgress() {
        var queue = accounting()
        queue.wrote(4096, completingFrame: false, at: .milliseconds(0))
        queue.writeWouldBlock()
        XCTAssertTrue(queue.isWriteBlocked)
        queue.wrote(100, completingFrame: true, at: .milliseconds(400))
        XCTAssertFalse(queue.isWriteBlocked)
        XCTAssertEqual(queue.lastDrain, .milliseconds(400))
    }

    func testAReadingClearsTheHold() {
        var queue = accounting()
        queue.hold()
        XCTAssertTrue(queue.isHolding)
        queue.observe(queued: 0, at: .milliseconds(10), pendingInCarbridge: true)
        XCTAssertFalse(queue.isHolding, "the caller decides again after each reading")
    }

    func testTheNextLookIsSoonWhileHeldSlowerWhileQueuedAndNeverWhenIdle() {
        var queue = accounting()
        XCTAssertNil(queue.nextCheck(at: .milliseconds(5), pendingInCarbridge: false, flushWaiting: false),
                     "nothing queued: no wake-up")
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(5), pendingInCarbridge: false, flushWaiting: true),
                       .milliseconds(15), "a flush waiter is answered soon")

        for _ in 0..<2 { queue.wrote(frame, completingFrame: true, at: .milliseconds(100)) }
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(100), pendingInCarbridge: false, flushWaiting: false),
                       .milliseconds(150), "bytes in the kernel: looked at every queue recheck interval")
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(1_080), pendingInCarbridge: false, flushWaiting: false),
                       .milliseconds(1_100), "never later than the instant the stall timeout runs out")
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(1_200), pendingInCarbridge: false, flushWaiting: false),
                       .milliseconds(1_250), "a stall already due was decided on: never looked at the same instant again")
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(1_200), pendingInCarbridge: false, flushWaiting: true),
                       .milliseconds(1_210), "while a flush waits: at the flush recheck interval")

        queue.hold()
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(300), pendingInCarbridge: true, flushWaiting: false),
                       .milliseconds(301), "a held frame is looked at after the held recheck interval")
        queue.observe(queued: 18, at: .milliseconds(300), pendingInCarbridge: true)
        queue.writeWouldBlock()
        XCTAssertEqual(queue.nextCheck(at: .milliseconds(300), pendingInCarbridge: true, flushWaiting: false),
                       .milliseconds(350), "a blocked write waits for writable; the timer only watches for a stall")
    }
}
