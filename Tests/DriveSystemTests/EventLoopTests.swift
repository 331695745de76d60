import CLinux
import DriveCore
import DriveSystem
import Glibc
import XCTest

final class EventLoopTests: XCTestCase {
    func testTimersFireInDeadlineOrderAndNotBefore() throws {
        let loop = try EventLoop()
        let start = loop.now()
        var fired: [(Int, Instant)] = []
        loop.schedule(at: start + .milliseconds(60)) { fired.append((2, loop.now())) }
        loop.schedule(at: start + .milliseconds(20)) { fired.append((1, loop.now())) }
        loop.schedule(at: start + .milliseconds(100)) { fired.append((3, loop.now())); loop.stop() }
        try loop.run(until: start + .seconds(5))
        XCTAssertEqual(fired.map(\.0), [1, 2, 3])
        XCTAssertGreaterThanOrEqual(fired[0].1, start + .milliseconds(20))
        XCTAssertGreaterThanOrEqual(fired[1].1, start + .milliseconds(60))
        XCTAssertGreaterThanOrEqual(fired[2].1, start + .milliseconds(100))
    }

    func testCancelledTimerDoesNotFire() throws {
        let loop = try EventLoop()
        var fired = false
        let id = loop.schedule(after: .milliseconds(10)) { fired = true }
        loop.cancel(id)
        XCTAssertNil(loop.nextTimerDeadline)
        try loop.run(until: loop.now() + .milliseconds(50))
        XCTAssertFalse(fired)
    }

    func testIdleLoopDoesNotWakeUp() throws {
        let loop = try EventLoop()
        let before = loop.wakeups
        try loop.run(until: loop.now() + .milliseconds(300))
        // One epoll_wait that timed out at the deadline; a polling loop would show dozens.
        XCTAssertLessThanOrEqual(loop.wakeups - before, 2)
    }

    func testATimerMovedLaterFiresOnlyAtItsNewDeadline() throws {
        // As a DeadlineTimer follows the stream period after every report: cancel, schedule later. The
        // timerfd stays armed at the old deadline (no system call per move); that wake-up fires nothing.
        let loop = try EventLoop()
        let start = loop.now()
        var fired: [Instant] = []
        let early = loop.schedule(at: start + .milliseconds(20)) { fired.append(loop.now()) }
        try loop.runOnce(timeout: .zero)  // the loop waits once: the timerfd is armed at +20 ms
        loop.cancel(early)
        loop.schedule(at: start + .milliseconds(60)) {
            fired.append(loop.now())
            loop.stop()
        }
        try loop.run(until: start + .seconds(5))
        XCTAssertEqual(fired.count, 1, "only the moved timer fires")
        XCTAssertGreaterThanOrEqual(fired[0], start + .milliseconds(60))
        XCTAssertNil(loop.nextTimerDeadline)
    }

    /// A timer that reschedules itself for now runs once per turn, so fds (and signals) still get theirs. The
    /// loop once fired such a timer over and over in one pass and never saw SIGTERM; here it gives up after
    /// `cap` firings, so the test fails instead of hanging on a loop without the rule.
    func testATimerReschedulingItselfForNowLetsTheLoopHandleItsFds() throws {
        try assertARescheduledTimerYieldsToFds(try EventLoop())
    }

    func testReadableFdDeliversDataAndUnwatchStopsIt() throws {
        let loop = try EventLoop()
        let (r, w) = try Syscall.pipe()
        defer { Syscall.close(r); Syscall.close(w) }
        var received: [UInt8] = []
        try loop.watch(r, for: .readable) { _ in
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = buffer.withUnsafeMutableBytes { (try? Syscall.read(r, into: $0)) ?? nil } ?? 0
            received += buffer[0..<n]
            loop.stop()
        }
        try Syscall.writeAll(w, Array("M,0,40,1\n".utf8))
        try loop.run(until: loop.now() + .seconds(5))
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "M,0,40,1\n")
        loop.unwatch(r)
        XCTAssertFalse(loop.isWatching(r))
    }

    /// Watch slots are reused: an fd unwatched by a handler earlier in the same batch must not have its event,
    /// already returned by `epoll_wait`, handed to a watch made meanwhile in its slot (the token's generation
    /// tells them apart). Two fds are ready at once; whichever is handled first unwatches the other and
    /// watches a third, which takes the freed slot and is not readable.
    func testAnEventOfAnUnwatchedFdNeverReachesTheWatchThatTookItsSlot() throws {
        let loop = try EventLoop()
        let pipes = try (0..<3).map { _ in try Syscall.pipe() }
        defer { for (r, w) in pipes { Syscall.close(r); Syscall.close(w) } }
        let (a, b, c) = (pipes[0].read, pipes[1].read, pipes[2].read)
        var calls: [String] = []
        func handler(_ name: String, other: Int32) -> (IOEvents) -> Void {
            { _ in
                calls.append(name)
                guard loop.isWatching(other) else { return }
                loop.unwatch(other)
                try? loop.watch(c, for: .readable) { _ in calls.append("c") }
            }
        }
        try loop.watch(a, for: .readable, handler("a", other: b))
        try loop.watch(b, for: .readable, handler("b", other: a))
        try Syscall.writeAll(pipes[0].write, [1])
        try Syscall.writeAll(pipes[1].write, [1])
        try loop.runOnce(timeout: .seconds(1))
        XCTAssertEqual(calls.count, 1, "one of a and b, and never c: \(calls)")
        XCTAssertFalse(calls.contains("c"))
        XCTAssertTrue(loop.isWatching(c))
    }

    func testSignalIsDeliveredThroughSignalfd() throws {
        let loop = try EventLoop()
        var got: Int32 = 0
        try loop.watchSignals([SIGUSR1]) { signal in got = signal; loop.stop() }
        // Thread-directed: other test threads do not block SIGUSR1, this one does.
        pthread_kill(pthread_self(), SIGUSR1)
        try loop.run(until: loop.now() + .seconds(5))
        XCTAssertEqual(got, SIGUSR1)
    }

    func testExecuteRunsAfterCurrentEvent() throws {
        let loop = try EventLoop()
        var order: [String] = []
        loop.schedule(after: .milliseconds(1)) {
            loop.execute { order.append("deferred"); loop.stop() }
            order.append("timer")
        }
        try loop.run(until: loop.now() + .seconds(5))
        XCTAssertEqual(order, ["timer", "deferred"])
    }

    func testSyscallErrorCarriesCallAndErrno() {
        let path = "/nonexistent-carbridge/x"
        XCTAssertThrowsError(try Syscall.retrying("open \(path)") { Glibc.open(path, O_RDONLY) }) { error in
            let systemError = error as? SystemError
            XCTAssertEqual(systemError?.errno, ENOENT)
            XCTAssertEqual(systemError?.call, "open \(path)")
        }
    }

    /// EBADF and EFAULT are bugs (a `preconditionFailure`, not a thrown error), EINVAL only where the
    /// caller says so; EBADF on a standard fd is the environment (started with it closed).
    func testProgrammerErrorsAreTold() {
        XCTAssertTrue(Syscall.isProgrammerError(EBADF))
        XCTAssertTrue(Syscall.isProgrammerError(EBADF, fd: 7))
        XCTAssertTrue(Syscall.isProgrammerError(EFAULT, fd: 1))
        XCTAssertFalse(Syscall.isProgrammerError(EBADF, fd: 1), "stdout closed by whoever started carbridge")
        XCTAssertFalse(Syscall.isProgrammerError(EINVAL))
        XCTAssertTrue(Syscall.isProgrammerError(EINVAL, forbiddingEINVAL: true))
        for code in [EAGAIN, EPIPE, ECONNREFUSED, EIO, ENOENT, EACCES] {
            XCTAssertFalse(Syscall.isProgrammerError(code, forbiddingEINVAL: true), "errno \(code)")
        }
    }
}

final class EventLoopSubmitTests: XCTestCase {
    func testSubmitFromAnotherThreadWakesTheLoopAndRunsOnItsThread() throws {
        let loop = try EventLoop()
        let ranOnLoop = LoopBound(Box())
        let started = loop.now()
        let loopThread = EventLoopSubmitTests.currentThreadID()
        try BackgroundThread.start { [submitter = loop.submitter] in
            // Submit while the loop sleeps in epoll_wait (its thread's state `S`), so the submit must wake it.
            let deadline = EventLoopSubmitTests.monotonicNanoseconds() + 2_000_000_000
            while EventLoopSubmitTests.threadState(loopThread) != "S" && EventLoopSubmitTests.monotonicNanoseconds() < deadline { usleep(1_000) }
            for _ in 0..<3 { submitter.submit { ranOnLoop.value.count += 1 } }
        }
        let deadline = started.advanced(by: .seconds(2))
        while ranOnLoop.value.count < 3 && loop.now() < deadline {
            try loop.runOnce(timeout: .seconds(2))
        }
        XCTAssertEqual(ranOnLoop.value.count, 3)
        XCTAssertLessThan(loop.now().duration(since: started), .milliseconds(500))
        XCTAssertTrue(loop.isOnLoopThread)
    }

    func testBackgroundThreadsBlockEverySignal() throws {
        let lock = ConditionLock()
        nonisolated(unsafe) var blocked: [Int32: Bool] = [:]
        try BackgroundThread.start {
            var mask = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &mask)
            lock.withLock {
                for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { blocked[signal] = sigismember(&mask, signal) == 1 }
                lock.broadcast()
            }
        }
        lock.withLock { while blocked.isEmpty { lock.wait() } }
        XCTAssertEqual(blocked, [SIGINT: true, SIGTERM: true, SIGHUP: true, SIGPIPE: true])
        var mine = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &mine)
        XCTAssertEqual(sigismember(&mine, SIGPIPE), 0, "the creating thread's mask was not restored")
    }

    final class Box { var count = 0 }

    /// The calling thread's id: `/proc/thread-self` links to `PID/task/TID`.
    private static func currentThreadID() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        let target = String(decoding: buffer.prefix(max(0, n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(target.split(separator: "/").last ?? "")
    }

    /// The state letter of `/proc/self/task/TID/stat` (`R` running, `S` sleeping, …).
    private static func threadState(_ tid: String) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
              let close = stat.range(of: ") ", options: .backwards) else { return nil }
        return stat[close.upperBound...].first
    }

    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

final class BoundedWriterTests: XCTestCase {
    func testALineLoggedAfterAnIdlePeriodIsStillWrittenByDrain() throws {
        let pipe = try Syscall.pipe(nonBlocking: false)
        defer { Syscall.close(pipe.read); Syscall.close(pipe.write) }
        let writer = BoundedWriter(fd: pipe.write) { "\($0) dropped" }
        writer.write("first")
        XCTAssertTrue(writer.drain(within: .seconds(1)))
        usleep(400_000)  // the wait is the test: idle for longer than the stall limit
        writer.write("last")
        XCTAssertTrue(writer.drain(within: .seconds(1), stallLimit: .milliseconds(300)))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(pipe.read, $0.baseAddress, $0.count) }
        XCTAssertEqual(String(decoding: buffer[..<max(0, n)], as: UTF8.self), "first\nlast\n")
        writer.finish()
    }

    func testAFullBufferDropsAndCountsLinesNeverBlocking() throws {
        let pipe = try Syscall.pipe(nonBlocking: false)
        defer { Syscall.close(pipe.read); Syscall.close(pipe.write) }
        _ = cb_fcntl_set(pipe.write, 1031, 4096)  // F_SETPIPE_SZ
        // Fill the pipe first (nobody reads it), so no line can get through however the writer's thread
        // is scheduled: without this a slow machine let the few queued lines fit into the pipe.
        _ = cb_fcntl_set(pipe.write, F_SETFL, O_NONBLOCK)
        let junk = [UInt8](repeating: 0x2E, count: 512)
        while junk.withUnsafeBytes({ Glibc.write(pipe.write, $0.baseAddress, $0.count) }) > 0 {}
        XCTAssertEqual(errno, EAGAIN)
        _ = cb_fcntl_set(pipe.write, F_SETFL, 0)
        let writer = BoundedWriter(fd: pipe.write, maxLines: 8, maxBytes: 1024) { "\($0) lines dropped" }
        let started = MonotonicClock.nanoseconds()
        for index in 0..<1000 { writer.write(String(repeating: "x", count: 100) + " \(index)") }
        XCTAssertLessThan(MonotonicClock.nanoseconds() - started, 100_000_000)
        XCTAssertGreaterThan(writer.droppedLines, 900)
        let startedDrain = MonotonicClock.nanoseconds()
        XCTAssertFalse(writer.drain(within: .seconds(2), stallLimit: .milliseconds(200)))  // nobody reads
        XCTAssertLessThan(MonotonicClock.nanoseconds() - startedDrain, 500_000_000)
        writer.finish()
    }
}

/// The loop on a manual clock: time moves only when advanced, timers fire in deadline order at their
/// exact instants, work and fds are handled in between, and no wall time passes.
final class ManualClockTests: XCTestCase {
    func testTimersFireInDeadlineOrderAtTheirInstants() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var fired: [(String, Instant)] = []
        loop.schedule(after: .milliseconds(30)) { fired.append(("c", loop.now())) }
        loop.schedule(after: .milliseconds(10)) {
            fired.append(("a", loop.now()))
            loop.schedule(after: .milliseconds(5)) { fired.append(("b", loop.now())) }
            loop.execute { fired.append(("a-work", loop.now())) }
        }
        let dropped = loop.schedule(after: .milliseconds(20)) { fired.append(("cancelled", loop.now())) }
        loop.cancel(dropped)
        let wall = MonotonicClock.nanoseconds()
        XCTAssertEqual(loop.now(), start, "a manual clock does not move by itself")
        try loop.advance(by: .milliseconds(12))
        XCTAssertEqual(loop.now(), start + .milliseconds(12))
        XCTAssertEqual(fired.map(\.0), ["a", "a-work"])
        try loop.advance(by: .seconds(3600))
        XCTAssertEqual(fired.map(\.0), ["a", "a-work", "b", "c"])
        XCTAssertEqual(fired.map { $0.1.duration(since: start) },
                       [.milliseconds(10), .milliseconds(10), .milliseconds(15), .milliseconds(30)])
        XCTAssertEqual(loop.now(), start + .milliseconds(12) + .seconds(3600))
        XCTAssertLessThan(MonotonicClock.nanoseconds() - wall, 1_000_000_000, "an hour of manual time takes no wall time")
        XCTAssertNil(loop.nextTimerDeadline)
    }

    func testRunUntilStepsThroughTimersAndStopsWhereStopWasCalled() throws {
        let loop = try EventLoop(clock: .manual)
        let start = loop.now()
        var ticks: [Duration] = []
        func tick() {
            ticks.append(loop.now().duration(since: start))
            if ticks.count == 4 { loop.stop() } else { loop.schedule(after: .milliseconds(50), tick) }
        }
        loop.schedule(after: .milliseconds(50), tick)
        try loop.run(until: start + .seconds(10))
        XCTAssertEqual(ticks, [.milliseconds(50), .milliseconds(100), .milliseconds(150), .milliseconds(200)])
        XCTAssertEqual(loop.now(), start + .milliseconds(200), "run(until:) returns at the instant of stop()")
        try loop.run(until: start + .seconds(1))
        XCTAssertEqual(loop.now(), start + .seconds(1))
    }

    func testATimerReschedulingItselfForNowLetsTheLoopHandleItsFds() throws {
        try assertARescheduledTimerYieldsToFds(try EventLoop(clock: .manual))
    }

    func testRealFdsArePolledWhileTimeIsAdvanced() throws {
        let loop = try EventLoop(clock: .manual)
        let (readEnd, writeEnd) = try Syscall.pipe()
        defer { Glibc.close(readEnd); Glibc.close(writeEnd) }
        var received: [(UInt8, Instant)] = []
        try loop.watch(readEnd, for: .readable) { _ in
            var byte: UInt8 = 0
            while (try? withUnsafeMutableBytes(of: &byte) { try Syscall.read(readEnd, into: $0) }) ?? nil == 1 {
                received.append((byte, loop.now()))
            }
        }
        let start = loop.now()
        loop.schedule(after: .milliseconds(40)) { var byte: UInt8 = 7; _ = Glibc.write(writeEnd, &byte, 1) }
        try loop.advance(by: .milliseconds(100))
        XCTAssertEqual(received.map(\.0), [7])
        XCTAssertEqual(received.first?.1, start + .milliseconds(40), "read at the instant it was written")
        // runOnce with a timeout advances at most that far, and not past the next timer.
        loop.schedule(after: .milliseconds(30)) {}
        try loop.runOnce(timeout: .milliseconds(10))
        XCTAssertEqual(loop.now(), start + .milliseconds(110))
        try loop.runOnce(timeout: .seconds(1))
        XCTAssertEqual(loop.now(), start + .milliseconds(130))
    }
}

/// Schedules a timer that reschedules itself at the instant the test began, a deadline that is always due (up
/// to `cap` times); its first firing makes a pipe readable, whose handler stops the loop. The handler must run
/// within a few firings of the timer, not after all of them.
private func assertARescheduledTimerYieldsToFds(_ loop: EventLoop, file: StaticString = #filePath, line: UInt = #line) throws {
    let cap = 100_000
    let (readEnd, writeEnd) = try Syscall.pipe()
    defer { Glibc.close(readEnd); Glibc.close(writeEnd) }
    let start = loop.now()
    var firings = 0
    var firingsWhenReadable: Int?
    func again() {
        firings += 1
        if firings == 1 {
            var byte: UInt8 = 1
            XCTAssertEqual(Glibc.write(writeEnd, &byte, 1), 1, file: file, line: line)
        }
        if firings < cap { loop.schedule(at: start, again) }
    }
    try loop.watch(readEnd, for: .readable) { _ in
        var byte: UInt8 = 0
        _ = Glibc.read(readEnd, &byte, 1)
        if firingsWhenReadable == nil { firingsWhenReadable = firings }
        loop.stop()
    }
    loop.schedule(at: start, again)
    try loop.run(until: start + .seconds(30))
    let seen = try XCTUnwrap(firingsWhenReadable, "the pipe's handler ran", file: file, line: line)
    XCTAssertLessThanOrEqual(seen, 3, "the fd waited for \(seen) firings of a timer that reschedules itself for now",
                             file: file, line: line)
    loop.unwatch(readEnd)
}
