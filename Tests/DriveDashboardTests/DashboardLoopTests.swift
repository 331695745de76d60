import DriveCore
import DriveLink
import DriveRuntime
import DriveSystem
import Logging
import XCTest

@testable import DriveDashboard

/// A link that records frames (with the loop's time) and whose state the test sets.
final class TestLink: CarLink {
    let name = "test"
    private(set) var state: LinkState = .down(reason: "not started")
    var onStateChange: ((LinkState) -> Void)?
    var onLine: ((CarLine) -> Void)?
    private(set) var texts: [String] = []
    private let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    func start() { set(.up) }
    func send(_ frame: Frame) { texts.append(frame.text) }
    func flush(within: Duration, then done: @escaping (FlushResult) -> Void) { loop.execute { done(.delivered) } }
    func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) {
        set(.closed)
        loop.execute { done(.delivered) }
    }

    func set(_ newState: LinkState) {
        state = newState
        onStateChange?(newState)
    }
}

/// The dashboard's loop side on a manual-clock loop: browser events in, the machine's frames out.
final class DashboardLoopTests: XCTestCase {
    private func make() throws -> (EventLoop, TestLink, Bridge, RunViewModel, DashboardLoop, DashboardMetrics, DashboardHub) {
        let loop = try EventLoop(clock: .manual)
        let link = TestLink(loop: loop)
        let bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let model = RunViewModel(observing: bridge)
        let metrics = DashboardMetrics()
        let core = DashboardLoop(bridge: bridge, model: model, loop: loop, metrics: metrics, maxSpeed: 240)
        let hub = DashboardHub { _, _ in }
        core.hub = hub
        bridge.start()
        return (loop, link, bridge, model, core, metrics, hub)
    }

    func testASilentSteeringTabStopsTheCar() throws {
        let (loop, link, _, _, core, metrics, _) = try make()
        XCTAssertEqual(link.texts, ["E,0,0,0"], "the handshake")
        core.handle(.message(.control(.steer(40))), from: 1)
        core.handle(.message(.control(.engine)), from: 1)
        core.handle(.message(.control(.speedUp)), from: 1)
        XCTAssertEqual(link.texts.last, "R,1,10,1")
        // Pings for 2 s keep it going; the stream runs meanwhile.
        for _ in 0..<8 {
            try loop.advance(by: .milliseconds(250))
            core.handle(.message(.ping), from: 1)
        }
        XCTAssertEqual(link.texts.last, "R,1,10,1")
        XCTAssertFalse(metrics.render().contains("carbridge_input_lost_stops_total 1"))
        // Then nothing: 1 s later the car gets the stop frame.
        let before = loop.now()
        try loop.advance(by: .milliseconds(999))
        XCTAssertEqual(link.texts.last, "R,1,10,1")
        try loop.advance(by: .milliseconds(1))
        XCTAssertEqual(link.texts.last, "R,1,0,1")
        XCTAssertEqual(loop.now().duration(since: before), .seconds(1))
        XCTAssertTrue(metrics.render().contains("carbridge_input_lost_stops_total 1"), metrics.render())
        // Speed+ is refused until the tab steers again (input missing, as after an unplug).
        core.handle(.message(.control(.speedUp)), from: 1)
        XCTAssertEqual(link.texts.last, "R,1,0,1")
        core.handle(.message(.control(.steer(0))), from: 1)
        core.handle(.message(.control(.speedUp)), from: 1)
        XCTAssertEqual(link.texts.last, "M,0,10,1")
    }

    func testAClosedSteeringTabStopsTheCarAtOnce() throws {
        let (_, link, _, _, core, _, _) = try make()
        core.handle(.message(.control(.engine)), from: 3)
        core.handle(.message(.control(.steer(-70))), from: 3)
        core.handle(.message(.control(.speedUp)), from: 3)
        core.handle(.message(.control(.speedUp)), from: 3)
        XCTAssertEqual(link.texts.last, "L,-2,20,1")
        core.handle(.disconnected, from: 3)
        XCTAssertEqual(link.texts.last, "L,-2,0,1")
    }

    func testMetricsAfterADrive() throws {
        let (loop, link, _, _, core, metrics, hub) = try make()
        core.handle(.message(.control(.engine)), from: 1)
        core.handle(.message(.control(.speedUp)), from: 1)
        core.handle(.message(.control(.speedUp)), from: 1)
        core.handle(.message(.control(.gear)), from: 1)
        core.handle(.message(.control(.function(3))), from: 1)
        try loop.advance(by: .milliseconds(120))
        link.onLine?(CarLine(time: loop.now(), text: "BAT 7.4V"))
        link.set(.down(reason: "reset"))
        link.set(.connecting)
        link.set(.up)
        let text = metrics.render()
        for expected in [
            #"carbridge_frames_sent_total{type="M"} 2"#, #"carbridge_frames_sent_total{type="B"} 4"#,
            #"carbridge_frames_sent_total{type="H"} 1"#, #"carbridge_frames_sent_total{type="E"} 1"#,
            "carbridge_handshakes_total 2", "carbridge_link_reconnects_total 1", "carbridge_car_lines_received_total 1",
            #"carbridge_link_state{state="up"} 1"#, "carbridge_link_up 1.0", "carbridge_engine_on 1.0", "carbridge_speed 0.0",
        ] {
            XCTAssertTrue(text.contains(expected), "\(expected) missing from\n\(text)")
        }
        // The hub has the newest state: the speed reset by the link loss (the handshake B,0,0,0), the car's line.
        let json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""speed":0"#), json)
        XCTAssertTrue(json.contains("BAT 7.4V"), json)
    }
}
