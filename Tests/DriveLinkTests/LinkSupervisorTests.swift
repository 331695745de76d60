import DriveCore
import DriveLink
import XCTest

/// The link lifecycle as a pure state machine: every transition and every fault ordering, with instants
/// alone (no loop, no fd). What each event returns is what `SupervisedLink` performs, in that order.
final class LinkSupervisorTests: XCTestCase {
    typealias Action = LinkSupervisor.Action
    let timeout = Duration.seconds(5)

    func makeUp(at now: Instant = .zero) -> LinkSupervisor {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        _ = supervisor.start(at: now)
        _ = supervisor.opened(attempt: 1)
        return supervisor
    }

    // MARK: connecting

    func testStartReportsConnectingArmsTheConnectTimerThenOpens() {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        XCTAssertEqual(supervisor.state.linkState, .down(reason: "not started"))
        XCTAssertEqual(supervisor.start(at: .milliseconds(10)), [
            .report(.connecting), .arm(.connect, at: .milliseconds(5010)), .open(attempt: 1),
        ])
        XCTAssertEqual(supervisor.state, .connecting(attempt: 1))
        XCTAssertEqual(supervisor.start(at: .milliseconds(20)), [], "a second start does nothing")
        XCTAssertEqual(supervisor.statistics.connectAttempts, 1)
    }

    func testOpenedGoesUpOnlyForTheAttemptUnderWay() {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        _ = supervisor.start(at: .zero)
        XCTAssertEqual(supervisor.opened(attempt: 7), [], "a late answer of another attempt is ignored")
        XCTAssertEqual(supervisor.opened(attempt: 1), [.cancel(.connect), .report(.up)])
        XCTAssertEqual(supervisor.state, .up)
        XCTAssertEqual(supervisor.statistics.connectionsMade, 1)
        XCTAssertEqual(supervisor.opened(attempt: 1), [], "up already")
    }

    func testAFailedAttemptBacksOffThenTheRetryStartsTheNextAttempt() {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        _ = supervisor.start(at: .zero)
        XCTAssertEqual(supervisor.failed("refused", stalled: false, at: .milliseconds(100)), [
            .cancel(.connect), .arm(.retry, at: .milliseconds(600)), .report(.down(reason: "refused")),
        ])
        XCTAssertEqual(supervisor.state, .backingOff(reason: "refused"))
        XCTAssertEqual(supervisor.statistics.lastRetryDelay, .milliseconds(500))
        XCTAssertEqual(supervisor.retryDue(at: .milliseconds(600)), [
            .report(.connecting), .arm(.connect, at: .milliseconds(5600)), .open(attempt: 2),
        ])
        XCTAssertEqual(supervisor.opened(attempt: 1), [], "the first attempt's late answer")
        XCTAssertEqual(supervisor.state, .connecting(attempt: 2))
    }

    func testTheBackOffDoublesToFiveSecondsAndStartsAgainAfterAConnection() {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        _ = supervisor.start(at: .zero)
        var delays: [Duration] = []
        var now = Instant.zero
        for _ in 0..<6 {
            _ = supervisor.failed("refused", stalled: false, at: now)
            delays.append(supervisor.statistics.lastRetryDelay!)
            now = now.advanced(by: delays.last!)
            _ = supervisor.retryDue(at: now)
        }
        XCTAssertEqual(delays, [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        _ = supervisor.opened(attempt: 7)
        _ = supervisor.failed("lost", stalled: false, at: now)
        XCTAssertEqual(supervisor.statistics.lastRetryDelay, .milliseconds(500), "reset by the connection")
    }

    func testTheConnectTimerAsksTheTransportToGiveUpWhoseFailureBacksOff() {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        _ = supervisor.start(at: .zero)
        XCTAssertEqual(supervisor.connectTimedOut(), [.abandonAttempt])
        XCTAssertEqual(supervisor.state, .connecting(attempt: 1), "the transport's failure moves it")
        _ = supervisor.failed("no answer within 5 s", stalled: false, at: .seconds(5))
        XCTAssertEqual(supervisor.state, .backingOff(reason: "no answer within 5 s"))
        XCTAssertEqual(supervisor.connectTimedOut(), [], "a timer of an attempt already over")
    }

    // MARK: losses

    func testALossWhileUpBacksOffAndAStallIsCounted() {
        var supervisor = makeUp()
        XCTAssertEqual(supervisor.failed("stalled", stalled: true, at: .seconds(2)), [
            .cancel(.connect), .arm(.retry, at: .milliseconds(2500)), .report(.down(reason: "stalled")),
        ])
        XCTAssertEqual(supervisor.statistics.stalls, 1)
        XCTAssertEqual(supervisor.failed("again", stalled: true, at: .seconds(2)), [], "lost already")
        XCTAssertEqual(supervisor.statistics.stalls, 1)
    }

    func testALossFailsTheFlushWaitersAndStopsTheDrainReports() {
        var supervisor = makeUp()
        XCTAssertEqual(supervisor.flush(id: 4, within: .seconds(1), drained: false, at: .zero), [
            .watchDrain(.flush), .arm(.flush, at: .seconds(1)),
        ])
        XCTAssertEqual(supervisor.failed("EOF", stalled: false, at: .milliseconds(10)), [
            .cancel(.connect), .finishFlushes([4], .linkDown), .cancel(.flush), .watchDrain(.off),
            .arm(.retry, at: .milliseconds(510)), .report(.down(reason: "EOF")),
        ])
    }

    // MARK: flush

    func testAFlushIsAnsweredAtOnceWhenDrainedOrNotConnected() {
        var supervisor = LinkSupervisor(connectTimeout: timeout)
        XCTAssertEqual(supervisor.flush(id: 1, within: .seconds(1), drained: true, at: .zero), [.finishFlushes([1], .linkDown)])
        supervisor = makeUp()
        XCTAssertEqual(supervisor.flush(id: 2, within: .seconds(1), drained: true, at: .zero), [.finishFlushes([2], .delivered)])
    }

    func testFlushWaitersEndWithTheDrainOrTheirOwnDeadline() {
        var supervisor = makeUp()
        _ = supervisor.flush(id: 1, within: .milliseconds(100), drained: false, at: .zero)
        XCTAssertEqual(supervisor.flush(id: 2, within: .milliseconds(300), drained: false, at: .zero),
                       [.arm(.flush, at: .milliseconds(100))], "already watching; the earliest deadline")
        XCTAssertEqual(supervisor.progressed(drained: false), [])
        XCTAssertEqual(supervisor.flushTimerFired(at: .milliseconds(100)), [
            .finishFlushes([1], .timedOut), .arm(.flush, at: .milliseconds(300)),
        ])
        XCTAssertEqual(supervisor.progressed(drained: true), [
            .finishFlushes([2], .delivered), .cancel(.flush), .watchDrain(.off),
        ])
        XCTAssertEqual(supervisor.state, .up, "a flush leaves the link up")
        XCTAssertEqual(supervisor.progressed(drained: true), [], "nothing waits")
    }

    func testTheLastFlushTimingOutStopsTheDrainReports() {
        var supervisor = makeUp()
        _ = supervisor.flush(id: 1, within: .milliseconds(100), drained: false, at: .zero)
        XCTAssertEqual(supervisor.flushTimerFired(at: .milliseconds(100)), [
            .finishFlushes([1], .timedOut), .watchDrain(.off),
        ])
    }

    // MARK: shutdown

    func testAShutdownWhileUpFlushesThenClosesCleanlyOnceDrained() {
        var supervisor = makeUp()
        XCTAssertEqual(supervisor.shutdown(within: .seconds(1), drained: false, at: .zero), [
            .watchDrain(.shutdown), .arm(.flush, at: .seconds(1)),
        ])
        XCTAssertEqual(supervisor.state.linkState, .up, "frames may still go while it flushes")
        XCTAssertTrue(supervisor.state.isConnected)
        XCTAssertEqual(supervisor.shutdown(within: .seconds(1), drained: false, at: .zero), [], "joins the one under way")
        XCTAssertEqual(supervisor.progressed(drained: true), [
            .cancel(.flush), .watchDrain(.off), .close(result: .delivered),
        ])
        XCTAssertFalse(supervisor.state.isConnected)
        XCTAssertEqual(supervisor.closed(), [.report(.closed), .finishShutdown(.delivered)])
        XCTAssertEqual(supervisor.state, .closed)
        XCTAssertEqual(supervisor.shutdown(within: .seconds(1), drained: true, at: .zero), [.finishShutdown(.linkDown)])
        XCTAssertEqual(supervisor.start(at: .zero), [], "closed for good")
    }

    func testAShutdownWindowThatRunsOutClosesAbortively() {
        var supervisor = makeUp()
        _ = supervisor.flush(id: 9, within: .seconds(5), drained: false, at: .zero)
        _ = supervisor.shutdown(within: .milliseconds(200), drained: false, at: .zero)
        XCTAssertEqual(supervisor.flushTimerFired(at: .milliseconds(200)), [
            .finishFlushes([9], .timedOut), .cancel(.flush), .watchDrain(.off), .close(result: .timedOut),
        ])
        XCTAssertEqual(supervisor.closed(), [.report(.closed), .finishShutdown(.timedOut)])
    }

    func testAShutdownOfADrainedLinkClosesAtOnce() {
        var supervisor = makeUp()
        XCTAssertEqual(supervisor.shutdown(within: .seconds(1), drained: true, at: .zero), [.close(result: .delivered)])
    }

    func testALossWhileShuttingDownEndsTheShutdownWithLinkDownAndNoReconnect() {
        var supervisor = makeUp()
        _ = supervisor.shutdown(within: .seconds(1), drained: false, at: .zero)
        XCTAssertEqual(supervisor.failed("EPIPE", stalled: false, at: .milliseconds(5)), [
            .cancel(.flush), .watchDrain(.off), .close(result: .linkDown),
        ])
        XCTAssertEqual(supervisor.retryDue(at: .seconds(1)), [])
        XCTAssertEqual(supervisor.closed(), [.report(.closed), .finishShutdown(.linkDown)])
    }

    func testAShutdownBeforeTheLinkIsUpStopsTheAttemptOrTheBackOff() {
        var idle = LinkSupervisor(connectTimeout: timeout)
        XCTAssertEqual(idle.shutdown(within: .seconds(1), drained: true, at: .zero), [.report(.closed), .finishShutdown(.linkDown)])

        var connecting = LinkSupervisor(connectTimeout: timeout)
        _ = connecting.start(at: .zero)
        XCTAssertEqual(connecting.shutdown(within: .seconds(1), drained: true, at: .zero), [
            .cancel(.connect), .close(result: .linkDown),
        ])
        XCTAssertEqual(connecting.opened(attempt: 1), [], "an answer after the shutdown began")
        XCTAssertEqual(connecting.failed("late", stalled: false, at: .zero), [], "no back-off while closing")
        XCTAssertEqual(connecting.closed(), [.report(.closed), .finishShutdown(.linkDown)])

        var backingOff = LinkSupervisor(connectTimeout: timeout)
        _ = backingOff.start(at: .zero)
        _ = backingOff.failed("refused", stalled: false, at: .zero)
        XCTAssertEqual(backingOff.shutdown(within: .seconds(1), drained: true, at: .zero), [
            .cancel(.retry), .close(result: .linkDown),
        ])
        XCTAssertEqual(backingOff.retryDue(at: .seconds(1)), [], "a retry timer that fired anyway")
    }

    // MARK: fault orderings

    /// Every order of the events that can race (a loss, the connect timer, the transport's late answer, a
    /// shutdown, a flush deadline) ends in a state the lifecycle allows, with the shutdown answered once
    /// (its waiters once) and no reconnect after it.
    func testEveryOrderOfRacingEventsEndsConsistently() {
        enum Event: CaseIterable { case opened, failed, stalled, connectTimer, retry, flushTimer, drained, shutdown, closed, flush }
        func apply(_ event: Event, to supervisor: inout LinkSupervisor, at now: Instant, id: Int) -> [Action] {
            switch event {
            case .opened: return supervisor.opened(attempt: 1)
            case .failed: return supervisor.failed("lost", stalled: false, at: now)
            case .stalled: return supervisor.failed("stalled", stalled: true, at: now)
            case .connectTimer: return supervisor.connectTimedOut()
            case .retry: return supervisor.retryDue(at: now)
            case .flushTimer: return supervisor.flushTimerFired(at: now)
            case .drained: return supervisor.progressed(drained: true)
            case .shutdown: return supervisor.shutdown(within: .milliseconds(50), drained: false, at: now)
            case .closed: return supervisor.closed()
            case .flush: return supervisor.flush(id: id, within: .milliseconds(20), drained: false, at: now)
            }
        }
        let events = Event.allCases
        var orders = 0
        for a in events { for b in events { for c in events { for d in events {
            var supervisor = LinkSupervisor(connectTimeout: timeout)
            _ = supervisor.start(at: .zero)
            var actions: [Action] = []
            var now = Instant.zero
            var flushIDs: [Int] = []
            for (index, event) in [a, b, c, d].enumerated() {
                now = now.advanced(by: .milliseconds(100))
                if event == .flush { flushIDs.append(index) }
                actions += apply(event, to: &supervisor, at: now, id: index)
            }
            orders += 1
            let label = [a, b, c, d].map { "\($0)" }.joined(separator: " ")
            let shutdowns = [a, b, c, d].filter { $0 == .shutdown }.count
            let shutdownsFinished = actions.filter { if case .finishShutdown = $0 { return true } else { return false } }.count
            XCTAssertLessThanOrEqual(shutdownsFinished, shutdowns, "each shutdown's waiters answered once: \(label)")
            let closes = actions.filter { if case .close = $0 { return true } else { return false } }.count
            XCTAssertLessThanOrEqual(closes, 1, "the transport is closed once: \(label)")
            if let shutdownAt = actions.firstIndex(where: { if case .close = $0 { return true } else { return false } }) {
                XCTAssertFalse(actions[shutdownAt...].contains { if case .open = $0 { return true } else { return false } },
                               "no attempt after the shutdown closed: \(label)")
                XCTAssertFalse(actions[shutdownAt...].contains { if case .arm(.retry, _) = $0 { return true } else { return false } },
                               "no back-off after the shutdown closed: \(label)")
            }
            if case .closed = supervisor.state {
                XCTAssertEqual(actions.last { if case .report = $0 { return true } else { return false } }, .report(.closed), label)
                XCTAssertGreaterThanOrEqual(shutdownsFinished, 1, label)
            }
            // Each flush waiter is answered at most once, and every one by the time the link is closed.
            let answered = actions.flatMap { action -> [Int] in
                if case .finishFlushes(let ids, _) = action { return ids } else { return [] }
            }
            XCTAssertEqual(Set(answered).count, answered.count, "a waiter answered twice: \(label)")
            XCTAssertTrue(Set(answered).isSubset(of: flushIDs), label)
            if case .closed = supervisor.state { XCTAssertEqual(Set(answered), Set(flushIDs), "unanswered waiters: \(label)") }
        } } } }
        XCTAssertEqual(orders, 10_000)
    }
}
