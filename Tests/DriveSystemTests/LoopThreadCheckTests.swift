import DriveSystem
import Glibc
import XCTest

/// "Loop thread only" is checked in a debug build: the thread that created a loop is its thread, and a
/// call from any other thread stops the process (an `assert`; a release build checks nothing).
final class LoopThreadCheckTests: XCTestCase {
    /// Carries a loop made on a helper thread back to the test's thread (which then must not use it).
    private final class LoopBox: @unchecked Sendable {
        let lock = ConditionLock()
        var loop: EventLoop?
        var failure: (any Error)?
    }

    func testTheCreatingThreadIsTheLoopsThreadAndOthersAreNot() throws {
        let box = LoopBox()
        let loop = try EventLoop()
        box.loop = loop
        XCTAssertTrue(loop.isOnLoopThread)
        nonisolated(unsafe) var elsewhere: Bool?
        try BackgroundThread.start {
            // Only reads which thread it is on (safe from any thread), never the loop's state.
            let answer = box.loop!.isOnLoopThread
            box.lock.withLock {
                elsewhere = answer
                box.lock.broadcast()
            }
        }
        box.lock.withLock { while elsewhere == nil { box.lock.wait() } }
        XCTAssertEqual(elsewhere, false)
        nonisolated(unsafe) var inSubmitted: Bool?
        loop.submit { inSubmitted = box.loop!.isOnLoopThread }
        for _ in 0..<10 where inSubmitted == nil { try loop.runOnce(timeout: .seconds(5)) }
        XCTAssertEqual(inSubmitted, true, "a submitted body runs on the loop's thread")
    }

    /// A loop created on a helper thread, then scheduled on from this one: the child process this is
    /// tried in dies of the assertion; without the check it would go on and exit 0.
    func testSchedulingFromAnotherThreadStopsADebugBuild() throws {
        #if !DEBUG
        throw XCTSkip("the loop-thread check is an assert: a release build has none")
        #else
        let box = LoopBox()
        try BackgroundThread.start {
            box.lock.withLock {
                do { box.loop = try EventLoop() } catch { box.failure = error }
                box.lock.broadcast()
            }
        }
        let loop: EventLoop = try box.lock.withLock {
            while box.loop == nil && box.failure == nil { box.lock.wait() }
            if let failure = box.failure { throw failure }
            return box.loop!
        }
        XCTAssertFalse(loop.isOnLoopThread)
        let pid = fork()
        if pid == 0 {
            // The child: quiet the assertion's message, then break the rule. SIGALRM ends a child that
            // hangs instead (a lock some other thread held at the fork), which the test reports.
            alarm(10)
            let null = open("/dev/null", O_WRONLY)
            dup2(null, 2)
            loop.schedule(after: .seconds(1)) {}
            _exit(0)
        }
        XCTAssertGreaterThan(pid, 0, "fork failed: errno \(errno)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Exited: the low 7 bits are 0 and the status is above them; killed: they are the signal.
        let signal = status & 0x7F
        XCTAssertNotEqual(signal, 0, "the child exited with status \(status >> 8) instead of stopping")
        XCTAssertTrue([SIGILL, SIGTRAP].contains(signal), "the child died of signal \(signal), not of the assertion's trap")
        #endif
    }
}
