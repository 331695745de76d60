import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

/// Host name resolution runs off the event loop: a DNS server that does not answer must not stop
/// the loop (a blocked loop cannot send the stop frame).
final class TCPResolutionTests: XCTestCase {
    /// Counts resolver calls across threads and can hold them until released.
    final class SlowResolver: @unchecked Sendable {
        private let lock = ConditionLock()
        private var running = 0
        private var maxRunning = 0
        private var calls = 0
        private var released = false
        let answer: [ResolvedAddress]
        let latest: Instant?

        /// Answers `answer`, each call only once `release()` was called (a DNS server that is slow
        /// for as long as the test wants, or never answers), or at `latest` (CLOCK_MONOTONIC) at the
        /// latest: code that resolves on the loop, blocking it so the test cannot release, ends.
        init(answer: [ResolvedAddress], latest: Instant? = nil) {
            self.answer = answer
            self.latest = latest
        }

        func resolve(_ host: String, _ port: Int) throws -> [ResolvedAddress] {
            lock.withLock {
                calls += 1
                running += 1
                maxRunning = max(maxRunning, running)
            }
            lock.withLock {
                while !released {
                    if let latest {
                        if !lock.wait(until: latest) { break }
                    } else {
                        lock.wait()
                    }
                }
                running -= 1
            }
            return answer
        }

        func release() { lock.withLock { released = true; lock.broadcast() } }
        var callCount: Int { lock.withLock { calls } }
        var mostAtOnce: Int { lock.withLock { maxRunning } }
        var runningCount: Int { lock.withLock { running } }
    }

    func testTimersFireOnTimeWhileAHostNameResolvesSlowly() throws {
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        let address = try XCTUnwrap(SocketSupport.resolveNumeric(host: "127.0.0.1", port: server.port))
        let resolver = SlowResolver(answer: address, latest: loop.now().advanced(by: .seconds(3)))
        let connector = TCPConnector(host: "car.slow-dns.example", port: server.port)
        connector.resolver = { try resolver.resolve($0, $1) }
        let link = TCPLink(connector: connector, loop: loop, options: LinkOptions(connectTimeout: .seconds(6)))
        let recorder = LinkRecorder(link)

        // A 50 ms timer is armed, then the connect starts: the timer fires on time, and again and
        // again while the name resolves.
        var lateness: [Duration] = []
        let started = loop.now()
        for round in 0..<5 {
            let deadline = loop.now().advanced(by: .milliseconds(50))
            var firedAt: Instant?
            loop.schedule(at: deadline) { firedAt = loop.now() }
            if round == 0 {
                link.start()
                XCTAssertEqual(link.state, .connecting)
            }
            XCTAssertTrue(try spin(loop, timeout: .seconds(1)) { firedAt != nil })
            lateness.append((firedAt ?? deadline.advanced(by: .seconds(1))).duration(since: deadline))
            XCTAssertEqual(link.state, .connecting)
        }
        // A loop blocked by the lookup fires them 3 s late (the resolver gives up holding it then). Bounds with room for a loaded CI machine's
        // scheduling delays (5.8 ms was seen for the median on one busy core).
        for late in lateness { XCTAssertLessThan(late, .milliseconds(250), "timer late by \(late) while resolving") }
        XCTAssertLessThan(lateness.sorted()[lateness.count / 2], .milliseconds(50), "\(lateness)")
        print("timer lateness while resolving: \(lateness.map { "\($0.nanoseconds / 1000) µs" })")

        // The lookup was still under way all along; once it answers, the answer comes back to the
        // loop and the connect goes on.
        XCTAssertEqual(resolver.runningCount, 1, "the lookup ended before the DNS server answered")
        XCTAssertLessThan(loop.now().duration(since: started), .milliseconds(2900), "the timers waited for the lookup")
        resolver.release()
        XCTAssertTrue(try spin(loop, timeout: .seconds(5)) { link.state == .up && server.acceptedCount == 1 })
        XCTAssertEqual(recorder.states, [.connecting, .up])
        XCTAssertEqual(resolver.callCount, 1)
    }

    func testAResolverThatNeverAnswersIsTimedOutAndNotStartedTwice() throws {
        let loop = try EventLoop()
        let resolver = SlowResolver(answer: [])
        let connector = TCPConnector(host: "car.dead-dns.example", port: 9)
        connector.resolver = { try resolver.resolve($0, $1) }
        let link = TCPLink(connector: connector, loop: loop, options: LinkOptions(connectTimeout: .milliseconds(100)))
        let recorder = LinkRecorder(link)
        link.start()
        // The connect timeout covers resolution; the retry waits for the resolution under way.
        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { link.connectAttempts >= 3 && link.state != .connecting })
        XCTAssertEqual(
            recorder.downReasons.first,
            "host \"car.dead-dns.example\" could not be resolved within 0.1 s: check the DNS server and the network, or use a numeric address")
        XCTAssertEqual(resolver.callCount, 1)
        XCTAssertEqual(resolver.mostAtOnce, 1)
        XCTAssertEqual(connector.resolutionsStarted, 1)

        // Answered at last (no address): the attempt waiting for it reports that, and the next
        // attempt starts a fresh resolution.
        resolver.release()
        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { !connector.isResolving })
        link.shutdown(flushWithin: .zero) { _ in }
        XCTAssertTrue(try spin(loop) { link.state == .closed })
    }

    func testNumericAddressesNeedNoThread() throws {
        let loop = try EventLoop()
        let server = try TestTCPServer(loop: loop)
        let connector = TCPConnector(host: "127.0.0.1", port: server.port)
        connector.resolver = { _, _ in
            XCTFail("a numeric address was looked up")
            return []
        }
        let link = TCPLink(connector: connector, loop: loop)
        link.start()
        XCTAssertTrue(try spin(loop) { link.state == .up && server.acceptedCount == 1 })
        XCTAssertEqual(connector.resolutionsStarted, 0)
        XCTAssertEqual(SocketSupport.resolveNumeric(host: "::1", port: 1)?.count, 1)
        XCTAssertNil(SocketSupport.resolveNumeric(host: "localhost", port: 1))
    }

    func testShutdownWhileResolvingIsImmediate() throws {
        let loop = try EventLoop()
        let resolver = SlowResolver(answer: [])
        let connector = TCPConnector(host: "car.dead-dns.example", port: 9)
        connector.resolver = { try resolver.resolve($0, $1) }
        let link = TCPLink(connector: connector, loop: loop)
        link.start()
        var result: FlushResult?
        let started = loop.now()
        link.shutdown(flushWithin: .seconds(1)) { result = $0 }
        XCTAssertTrue(try spin(loop, timeout: .seconds(1)) { result != nil })
        XCTAssertEqual(result, .linkDown)
        XCTAssertLessThan(loop.now().duration(since: started), .milliseconds(500), "the flush window is 1 s")
        resolver.release()
        // The late answer is ignored: the link stays closed.
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { !connector.isResolving })
        XCTAssertEqual(link.state, .closed)
    }
}
