import DriveCore
import DriveLink
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Glibc
import Logging
import XCTest

/// A socketpair car: the link's end and the car's (`peer`), real bytes both ways.
private final class PairConnector: StreamConnector {
    let name = "pair"
    var peer: Int32 = -1

    func open() throws -> (fd: Int32, progress: ConnectProgress) { (try openSocketPair(replacing: &peer), .connected) }
    func finishConnect(_ fd: Int32) throws {}
    func lossSentence(_ error: SystemError) -> String { "the car is gone (errno \(error.errno))" }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws -> Int? { try SocketSupport.send(fd, bytes) }
    var queuedBytesArePayload: Bool { false }
}

/// Every event of the run, in the order the subscribers heard them.
private final class EventLog: RunSubscriber {
    var events: [RunEvent] = []
    func receive(_ event: RunEvent) { events.append(event) }
}

/// Issue 39: a write that fails inside the bridge's delivery (the car gone between two frames, noticed by the
/// write itself) must neither count the frame as sent nor publish the link's loss before the step that tried
/// to send it. The link's loss is told after the step, as the next event.
final class FailedWriteOrderTests: XCTestCase {
    func testAFailedWriteIsNotCountedAndTheLossComesAfterItsStep() throws {
        let loop = try makeManualLoop()
        let connector = PairConnector()
        let link = StreamLink(connector: connector, loop: loop, options: LinkOptions())
        let events = RunEvents()
        let log = EventLog()
        events.subscribe(log)
        let bridge = Bridge(
            settings: DriveSettings(), link: link, loop: loop, logger: Logger(label: "t") { _ in SwiftLogNoOpLogHandler() },
            events: events)
        bridge.start()
        XCTAssertEqual(link.state, .up)
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        XCTAssertEqual(bridge.framesSent, 2, "the handshake and M,0,10,1")
        var buffer = [UInt8](repeating: 0, count: 256)
        let got = read(connector.peer, &buffer, buffer.count)
        XCTAssertEqual(String(decoding: buffer[0..<max(0, got)], as: UTF8.self), "E,0,0,0\nM,0,10,1\n")

        // The car goes away; nothing has run on the loop since, so the next write is the first to know.
        Glibc.close(connector.peer)
        connector.peer = -1
        log.events.removeAll()
        bridge.apply(.speedUp)

        XCTAssertEqual(bridge.framesSent, 2, "the frame whose write failed was not sent")
        let order = log.events.map { event -> String in
            switch event {
            case .step(let step): return "step \(step.control.map { "\($0)" } ?? "-") [\(step.frames.map(\.text).joined(separator: " "))]"
            case .link(let state): return "link \(state.isUp ? "up" : "not up")"
            case .notice(let text, _): return "notice \(text.prefix(9))"
            case .linkStatistics(let statistics): return "statistics retry \(statistics.lastRetryDelay.map { "\($0)" } ?? "none")"
            default: return "other"
            }
        }
        XCTAssertEqual(order.first, "step speedUp []", "the control's step first, with no frame: \(order)")
        XCTAssertEqual(Array(order.dropFirst().prefix(3)), ["statistics retry 0.5 seconds", "link not up", "step - []"],
                       "then the loss (its back-off with it) and its step: \(order)")
        XCTAssertEqual(bridge.state.speed, 0, "the loss reset the speed")
        XCTAssertFalse(link.state.isUp)
    }
}
