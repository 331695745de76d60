import DriveCore
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// `kiosk.session_limit_s` on the bridge, on a manual-clock loop: a turn ends exactly at its limit
/// with the stop frame (when moving) and `E,0,0,0`; nothing follows; the next Engine starts a new turn.
final class SessionLimitBridgeTests: XCTestCase {
    private var loop: EventLoop!
    private var link: RecordingCarLink!

    private func makeBridge(limit: Duration?, settings: DriveSettings = DriveSettings()) throws -> Bridge {
        loop = try makeManualLoop()
        link = RecordingCarLink(loop: loop)
        let logger = Logger(label: "session-limit-test") { _ in SwiftLogNoOpLogHandler() }
        let bridge = Bridge(settings: settings, link: link, loop: loop, logger: logger, sessionLimit: limit)
        bridge.start()
        link.set(.up)
        XCTAssertEqual(link.texts, ["E,0,0,0"])
        link.forgetFrames()
        return bridge
    }

    private func run(milliseconds: Int64) throws {
        try DriveTestSupport.run(loop, for: .milliseconds(milliseconds))
    }

    func testTheTurnEndsAtTheLimitWithTheStopFrameThenEngineOff() throws {
        let bridge = try makeBridge(limit: .seconds(2))
        bridge.apply(.engine)
        let engineOn = loop.now()
        try run(milliseconds: 500)
        bridge.apply(.speedUp)
        bridge.apply(.steer(30))
        try run(milliseconds: 3000)
        XCTAssertFalse(bridge.state.engineOn)
        XCTAssertEqual(bridge.state.speed, 0)
        let texts = link.texts
        XCTAssertEqual(Array(texts.suffix(2)), ["R,1,0,1", "E,0,0,0"], "stop frame then engine off, last: \(texts)")
        XCTAssertTrue(texts.dropLast(2).allSatisfy { $0 == "M,0,10,1" || $0 == "R,1,10,1" }, "\(texts)")
        let stop = link.frames[link.frames.count - 2], off = link.frames[link.frames.count - 1]
        XCTAssertEqual(stop.time.duration(since: engineOn), .seconds(2), "the stop frame exactly at the limit")
        XCTAssertEqual(off.time.duration(since: engineOn), .seconds(2), "E,0,0,0 exactly at the limit")
    }

    func testAStandingCarGetsOnlyEngineOff() throws {
        let bridge = try makeBridge(limit: .seconds(1))
        bridge.apply(.engine)
        try run(milliseconds: 1500)
        XCTAssertEqual(link.texts, ["E,0,0,0"])
        XCTAssertFalse(bridge.state.engineOn)
    }

    func testTheNextEnginePressStartsANewFullTurn() throws {
        let bridge = try makeBridge(limit: .seconds(1))
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        try run(milliseconds: 1200)
        XCTAssertEqual(Array(link.texts.suffix(2)), ["M,0,0,1", "E,0,0,0"])
        link.forgetFrames()
        // Engine off: Speed+ does nothing until the next turn starts.
        bridge.apply(.speedUp)
        XCTAssertEqual(link.texts, [])
        try run(milliseconds: 3000)
        XCTAssertEqual(link.texts, [], "nothing while no turn runs")
        bridge.apply(.engine)
        let secondTurn = loop.now()
        bridge.apply(.speedUp)
        XCTAssertEqual(link.texts, ["M,0,10,1"])
        try run(milliseconds: 999)
        XCTAssertTrue(bridge.state.engineOn, "the new turn is a full one")
        try run(milliseconds: 500)
        XCTAssertFalse(bridge.state.engineOn)
        XCTAssertEqual(link.frames.last?.time.duration(since: secondTurn), .seconds(1))
        XCTAssertEqual(Array(link.texts.suffix(2)), ["M,0,0,1", "E,0,0,0"])
    }

    func testEngineOffBeforeTheLimitEndsTheTurn() throws {
        let bridge = try makeBridge(limit: .seconds(1))
        bridge.apply(.engine)
        try run(milliseconds: 600)
        bridge.apply(.engine)  // the driver stops
        try run(milliseconds: 600)
        bridge.apply(.engine)
        let again = loop.now()
        try run(milliseconds: 900)
        XCTAssertTrue(bridge.state.engineOn, "the old turn's end must not cut the new one")
        try run(milliseconds: 200)
        XCTAssertFalse(bridge.state.engineOn)
        XCTAssertEqual(link.frames.last?.time.duration(since: again), .seconds(1))
        XCTAssertEqual(link.texts, ["E,0,0,0", "E,0,0,0"])
    }

    func testTheLimitWhileTheLinkIsDownTurnsTheEngineOffSilently() throws {
        let bridge = try makeBridge(limit: .seconds(1))
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        link.set(.down(reason: "test"))
        try run(milliseconds: 1500)
        XCTAssertFalse(bridge.state.engineOn)
        link.forgetFrames()
        link.set(.up)
        XCTAssertEqual(link.texts, ["E,0,0,0"], "the handshake says the engine is off")
    }

    func testNoLimitNoTimer() throws {
        let bridge = try makeBridge(limit: nil)
        bridge.apply(.engine)
        try run(milliseconds: 100_000)
        XCTAssertTrue(bridge.state.engineOn)
        XCTAssertNil(loop.nextTimerDeadline, "no timer without a limit")
    }

    func testTheIdleTimeoutAndTheLimitTogether() throws {
        let bridge = try makeBridge(limit: .seconds(10), settings: DriveSettings(idleTimeout: .seconds(2)))
        bridge.apply(.engine)
        try run(milliseconds: 2500)
        XCTAssertFalse(bridge.state.engineOn, "idle timeout first")
        XCTAssertEqual(link.texts, ["E,0,0,0"])
        try run(milliseconds: 10_000)
        XCTAssertEqual(link.texts, ["E,0,0,0"], "the limit's end does nothing after the idle timeout")
    }
}
