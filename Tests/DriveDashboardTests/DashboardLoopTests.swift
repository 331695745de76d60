import DriveBluetooth
import DriveConfig
import DriveCore
import DriveLink
import DriveRuntime
import DriveSystem
import DriveWebProtocol
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
    /// What a supervised link would say of its lifecycle (nil: a link that does not reconnect).
    var statistics: LinkSupervisor.Statistics?
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
        let model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        let metrics = DashboardMetrics()
        let core = DashboardLoop(
            port: bridge, state: bridge.state, link: bridge.link.state, model: model, loop: loop, metrics: metrics, maxSpeed: 240,
            scanner: { FakeScanner() }, saveLink: { (_: String) throws(ConfigErrors) -> String in "unused.toml" })
        let hub = DashboardHub { _, _ in }
        core.hub = hub
        bridge.start()
        return (loop, link, bridge, model, core, metrics, hub)
    }

    func testDetachLeavesTheRunsSubscribersAndEndsTheCycle() throws {
        let loop = try EventLoop(clock: .manual)
        let link = TestLink(loop: loop)
        let bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        var core: DashboardLoop? = DashboardLoop(
            port: bridge, state: bridge.state, link: bridge.link.state, model: model, loop: loop, metrics: DashboardMetrics(), maxSpeed: 240,
            scanner: { FakeScanner() }, saveLink: { (_: String) throws(ConfigErrors) -> String in "unused.toml" })
        weak let weakCore = core
        XCTAssertTrue(bridge.events.subscribers.last === core, "it subscribes after the model")
        core = nil
        XCTAssertNotNil(weakCore, "the run's subscribers keep it, and it keeps the bridge")
        weakCore?.detach()
        XCTAssertNil(weakCore, "detached, nothing keeps the dashboard's loop side")
        XCTAssertEqual(bridge.events.subscribers.count, 1)
        XCTAssertTrue(bridge.events.subscribers.first === model)
        bridge.start()
        bridge.apply(.engine)
        XCTAssertEqual(model.snapshot.state.engineOn, true)
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

    func testASilentPhoneStopsTheCarAt500msAndOthersAreToldWhoDrives() throws {
        let (loop, link, bridge, _, core, _, hub) = try make()
        let phone = hub.subscribe().id
        let other = hub.subscribe().id
        core.handle(.connected(label: "phone \(phone) (Android)"), from: phone)
        core.handle(.connected(label: "phone \(other) (iPhone)"), from: other)
        let held = ClientMessage.stick(PhoneStickReading(x: 0, y: 0.5, form: .xy))
        core.handle(.message(.control(.engine)), from: phone)
        core.handle(.message(.stick(PhoneStickReading(x: 0, y: 0, form: .xy))), from: phone)
        core.handle(.message(held), from: phone)
        XCTAssertEqual(link.texts.last, "M,0,120,1")
        // The other phone is refused, told why, and nothing of it reaches the car.
        core.handle(.message(.control(.engine)), from: other)
        XCTAssertEqual(hub.takeReplies(other), [.init(.rejected, "phone \(phone) (Android) is driving: wait for your turn")])
        XCTAssertTrue(bridge.state.engineOn)
        // Heartbeats keep it going; then silence: the stop frame at exactly 500 ms.
        for _ in 0..<4 {
            try loop.advance(by: .milliseconds(50))
            core.handle(.message(held), from: phone)
        }
        let before = loop.now()
        try loop.advance(by: .milliseconds(499))
        XCTAssertEqual(link.texts.last, "M,0,120,1")
        try loop.advance(by: .milliseconds(1))
        XCTAssertEqual(link.texts.last, "M,0,0,1")
        XCTAssertEqual(loop.now().duration(since: before), .milliseconds(500))
        // The other phone takes over: its held stick gives no speed before it rested.
        core.handle(.message(held), from: other)
        XCTAssertEqual(link.texts.last, "M,0,0,1")
        XCTAssertEqual(bridge.state.speed, 0)
        core.handle(.message(.stick(PhoneStickReading(x: 0, y: 0, form: .xy))), from: other)
        core.handle(.message(held), from: other)
        XCTAssertEqual(link.texts.last, "M,0,120,1")
        // A stop from elsewhere (the keyboard's engine off and on): the stick rests first again.
        bridge.apply(.engine)
        bridge.apply(.engine)
        core.handle(.message(.stick(PhoneStickReading(x: 0, y: 0.8, form: .xy))), from: other)
        XCTAssertEqual(bridge.state.speed, 0, "no speed from a stick held through the stop")
    }

    /// Issue 38: a phone steering by tilt whose sensor stops while its page keeps sending the heartbeat (the
    /// last orientation, the same `seq`): the stop frame at exactly `input_timeout_ms` after its last sensor
    /// event, and that phone alone is told why.
    func testATiltPhoneWhoseSensorStopsStopsTheCarAndIsToldWhy() throws {
        let (loop, link, _, _, core, _, hub) = try make()
        let phone = hub.subscribe().id
        core.handle(.connected(label: "phone \(phone) (Android)"), from: phone)
        func tilt(_ gamma: Double, _ seq: Int) -> DashboardHub.ClientEvent {
            .message(.tilt(PhoneTiltReading(beta: 0, gamma: gamma, hold: .flat, sequence: seq)))
        }
        core.handle(.message(.control(.engine)), from: phone)
        core.handle(tilt(30, 1), from: phone)
        core.handle(.message(.control(.speedUp)), from: phone)
        core.handle(.message(.control(.speedUp)), from: phone)
        XCTAssertEqual(link.texts.last, "R,1,20,1")
        // The sensor fires for a while (each report a new seq), then stops: the page's heartbeat goes on.
        var seq = 1
        for _ in 0..<6 {
            try loop.advance(by: .milliseconds(50))
            seq += 1
            core.handle(tilt(30, seq), from: phone)
        }
        let lastEvent = loop.now()
        for _ in 0..<9 {
            try loop.advance(by: .milliseconds(50))
            core.handle(tilt(30, seq), from: phone)
            XCTAssertEqual(link.texts.last, "R,1,20,1")
        }
        try loop.advance(by: .milliseconds(49))
        XCTAssertEqual(link.texts.last, "R,1,20,1")
        try loop.advance(by: .milliseconds(1))
        XCTAssertEqual(loop.now().duration(since: lastEvent), .milliseconds(500))
        XCTAssertEqual(link.texts.last, "R,1,0,1", "the stop frame at the input timeout")
        let told = hub.takeReplies(phone)
        XCTAssertEqual(told.map(\.kind), [.stopped])
        XCTAssertTrue(told.first?.text.contains("tilt sensor sent nothing for 500 ms") ?? false, "\(told)")
        // Its heartbeat goes on with the same seq: nothing comes back; a new sensor event steers again.
        core.handle(tilt(30, seq), from: phone)
        core.handle(.message(.control(.speedUp)), from: phone)
        XCTAssertEqual(link.texts.last, "R,1,0,1")
        core.handle(tilt(0, seq + 1), from: phone)
        core.handle(.message(.control(.speedUp)), from: phone)
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

    /// Issue 39: the stall counter and the retry countdown come from the link's statistics as a run event
    /// (`linkStatistics`), whatever the link: a BLE car's stalls count as a TCP car's do, and the dashboard
    /// no longer casts the bridge's link to find them.
    func testStallsAndTheRetryCountdownComeFromTheLinksStatisticsEvent() throws {
        let (loop, link, _, _, _, metrics, hub) = try make()
        var statistics = LinkSupervisor.Statistics()
        statistics.stalls = 1
        statistics.lastRetryDelay = .seconds(2)
        link.statistics = statistics
        link.set(.down(reason: "HMSoft did not acknowledge a frame within 1 s: the link is down"))
        XCTAssertTrue(metrics.render().contains("carbridge_link_stalls_total 1"), metrics.render())
        var json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""retryMs":2000"#), json)
        link.set(.connecting)
        statistics.stalls = 3
        statistics.lastRetryDelay = .seconds(4)
        link.statistics = statistics
        link.set(.down(reason: "again"))
        XCTAssertTrue(metrics.render().contains("carbridge_link_stalls_total 3"), "counted once each: \(metrics.render())")
        json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""retryMs":4000"#), json)
    }
}

/// A scanner the test drives: it records start/stop and sends the events the test gives it.
final class FakeScanner: BluetoothScanning {
    private(set) var started = 0
    private(set) var stopped = 0
    private var event: ((ScanEvent) -> Void)?
    /// Sent synchronously from `start` (a scanner that fails at once, as BlueZ does without a bus).
    var immediate: ScanEvent?

    func start(_ event: @escaping (ScanEvent) -> Void) {
        started += 1
        self.event = event
        if let immediate { event(immediate) }
    }

    func stop() {
        stopped += 1
        event = nil
    }

    /// Sends `update` as the scanner would (nothing once stopped).
    func send(_ update: ScanEvent) { event?(update) }
    var running: Bool { event != nil }
}

/// A link saver the tests drive: it records what it saved and answers `result`, after `delay` (a slow disk).
/// It runs on the helper thread the loop offloads the save to, hence the lock.
final class RecordingSaver: @unchecked Sendable {
    private let lock = ConditionLock()
    private var saved: [String] = []
    private var answer: Result<String, ConfigErrors> = .success("/etc/carbridge/red.toml")
    /// How long a save takes.
    var delay: Duration = .zero

    var saves: [String] { lock.withLock { saved } }
    var result: Result<String, ConfigErrors> {
        get { lock.withLock { answer } }
        set { lock.withLock { answer = newValue } }
    }

    func save(_ url: String) throws(ConfigErrors) -> String {
        if delay > .zero { usleep(UInt32(delay.nanoseconds / 1000)) }
        let answer = lock.withLock { () -> Result<String, ConfigErrors> in
            saved.append(url)
            return self.answer
        }
        return try answer.get()
    }
}

/// The Bluetooth search on the loop, with a fake scanner and a recording saver on a manual clock.
final class DashboardBluetoothSearchTests: XCTestCase {
    private var scanners: [FakeScanner] = []
    private let saver = RecordingSaver()
    private var saves: [String] { saver.saves }
    private var immediate: ScanEvent?

    /// Picks `address` and runs the loop until the save, made on a helper thread, has come back.
    private func pick(_ address: String, _ core: DashboardLoop, _ loop: EventLoop) throws {
        core.handle(.message(.bluetoothPick(address: address)), from: 1)
        for _ in 0..<2000 where core.bluetoothSearch.message.hasPrefix("saving") {
            usleep(500)
            try loop.advance(by: .zero)
        }
        XCTAssertFalse(core.bluetoothSearch.message.hasPrefix("saving"), "the save never came back")
    }

    private func make() throws -> (EventLoop, DashboardLoop, DashboardHub, Bridge) {
        let loop = try EventLoop(clock: .manual)
        let link = TestLink(loop: loop)
        let bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        let core = DashboardLoop(
            port: bridge, state: bridge.state, link: bridge.link.state, model: model, loop: loop, metrics: DashboardMetrics(), maxSpeed: 240,
            scanner: { [unowned self] in
                let scanner = FakeScanner()
                scanner.immediate = self.immediate
                self.scanners.append(scanner)
                return scanner
            },
            saveLink: { [saver] (url: String) throws(ConfigErrors) -> String in try saver.save(url) })
        let hub = DashboardHub { _, _ in }
        core.hub = hub
        bridge.start()
        return (loop, core, hub, bridge)
    }

    private let hc05 = ScannedDevice(address: "98:D3:31:F5:2A:11", rssi: -58)

    func testResultsReachTheHubAndTheSearchEndsAfterItsBound() throws {
        let (loop, core, hub, _) = try make()
        let start = loop.now()
        core.handle(.message(.bluetoothScan), from: 1)
        XCTAssertEqual(scanners.count, 1)
        let scanner = try XCTUnwrap(scanners.first)
        XCTAssertEqual(scanner.started, 1)
        XCTAssertEqual(core.bluetoothSearch.phase, .searching)
        scanner.send(.started(adapter: "hci0 (00:1A:7D:DA:71:13)"))
        try loop.advance(by: .seconds(2))
        scanner.send(.found(hc05))
        var json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""bt":{"phase":"searching","message":"searching on hci0 (00:1A:7D:DA:71:13) for 12 s…","devices":[{"addr":"98:D3:31:F5:2A:11","rssi":-58,"paired":false,"serial":false,"url":"rfcomm://98:D3:31:F5:2A:11"}]}"#), json)
        // The name comes later (an HC-05 says it ~10 s in): the same entry, the RSSI kept.
        try loop.advance(by: .seconds(8))
        scanner.send(.found(ScannedDevice(address: "98:D3:31:F5:2A:11", name: "HC-05", paired: true, serialPort: true)))
        scanner.send(.found(ScannedDevice(address: "00:11:22:33:44:55")))
        XCTAssertEqual(core.bluetoothSearch.devices, [
            ScannedDevice(address: "98:D3:31:F5:2A:11", name: "HC-05", rssi: -58, paired: true, serialPort: true),
            ScannedDevice(address: "00:11:22:33:44:55"),
        ])
        // A second bt_scan while searching starts nothing.
        core.handle(.message(.bluetoothScan), from: 2)
        XCTAssertEqual(scanners.count, 1)
        // 12 s after the start: stopped, finished; later events are ignored.
        try loop.advance(to: start.advanced(by: .milliseconds(11_999)))
        XCTAssertTrue(scanner.running)
        try loop.advance(to: start.advanced(by: .seconds(12)))
        XCTAssertFalse(scanner.running)
        XCTAssertEqual(scanner.stopped, 1)
        XCTAssertEqual(core.bluetoothSearch.phase, .finished)
        XCTAssertEqual(core.bluetoothSearch.message, "found 2 devices in 12 s: pick the car")
        json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#"{"addr":"98:D3:31:F5:2A:11","name":"HC-05","rssi":-58,"paired":true,"serial":true,"url":"rfcomm://98:D3:31:F5:2A:11"}"#), json)
        XCTAssertTrue(json.contains(#""phase":"finished""#), json)
        // A new search starts afresh.
        core.handle(.message(.bluetoothScan), from: 1)
        XCTAssertEqual(scanners.count, 2)
        XCTAssertEqual(core.bluetoothSearch.devices, [])
        try loop.advance(by: .seconds(12))
        XCTAssertEqual(core.bluetoothSearch.message, "no Bluetooth devices answered within 12 s (is the car switched on and discoverable?)")
    }

    func testNoBluetoothdShowsTheSentence() throws {
        immediate = .failed("bluetoothd is not running (nobody owns org.bluez on the system bus)")
        let (loop, core, hub, _) = try make()
        core.handle(.message(.bluetoothScan), from: 1)
        XCTAssertEqual(core.bluetoothSearch.phase, .failed)
        XCTAssertEqual(core.bluetoothSearch.message, "bluetoothd is not running (nobody owns org.bluez on the system bus)")
        XCTAssertEqual(scanners.first?.stopped, 1)
        let json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""bt":{"phase":"failed","message":"bluetoothd is not running"#), json)
        // The bound's timer went with it: nothing changes 12 s later; a new search may start.
        try loop.advance(by: .seconds(13))
        XCTAssertEqual(core.bluetoothSearch.phase, .failed)
        immediate = nil
        core.handle(.message(.bluetoothScan), from: 1)
        XCTAssertEqual(core.bluetoothSearch.phase, .searching)
        XCTAssertEqual(scanners.count, 2)
    }

    private let hmSoft = ScannedDevice(
        address: "C8:FD:19:12:34:56", name: "HMSoft", rssi: -60, profile: .hm10, transports: .le)

    /// A BLE UART car is listed with its profile and transport, and *Use this car* saves `ble://NAME`.
    func testABLECarIsSavedAsBLEByName() throws {
        let (loop, core, hub, _) = try make()
        core.handle(.message(.bluetoothScan), from: 1)
        scanners[0].send(.found(hmSoft))
        scanners[0].send(.found(ScannedDevice(address: "98:D3:31:F5:2A:11", name: "HC-05", transports: .bredr)))
        var json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(
            #"{"addr":"C8:FD:19:12:34:56","name":"HMSoft","rssi":-60,"paired":false,"serial":false,"transport":"le","profile":"HM-10 UART","url":"ble://HMSoft"}"#), json)
        XCTAssertTrue(json.contains(
            #"{"addr":"98:D3:31:F5:2A:11","name":"HC-05","paired":false,"serial":false,"transport":"bredr","url":"rfcomm://98:D3:31:F5:2A:11"}"#), json)
        try pick("C8:FD:19:12:34:56", core, loop)
        XCTAssertEqual(saves, ["ble://HMSoft"])
        XCTAssertEqual(core.bluetoothSearch.saved, "ble://HMSoft")
        XCTAssertEqual(core.bluetoothSearch.message,
            #"saved link.url = "ble://HMSoft" in /etc/carbridge/red.toml; takes effect at the next start (the running link is not switched)"#)
        json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""saved":"ble://HMSoft""#), json)
        // The classic car beside it is still saved as rfcomm://ADDRESS.
        try pick("98:D3:31:F5:2A:11", core, loop)
        XCTAssertEqual(saves.last, "rfcomm://98:D3:31:F5:2A:11")
    }

    /// A BLE car without a name, or whose name another device found shares, is saved by its address.
    func testABLECarIsSavedByAddressWhenNamelessOrAmbiguous() throws {
        let (loop, core, _, _) = try make()
        core.handle(.message(.bluetoothScan), from: 1)
        scanners[0].send(.found(ScannedDevice(address: "C8:FD:19:00:00:01", profile: .nordic, transports: .le)))
        try pick("C8:FD:19:00:00:01", core, loop)
        XCTAssertEqual(saves, ["ble://C8:FD:19:00:00:01"])
        scanners[0].send(.found(hmSoft))
        XCTAssertEqual(core.bluetoothSearch.linkURL(for: hmSoft), "ble://HMSoft")
        // Another HMSoft (any case) comes in range: the name no longer finds one car.
        scanners[0].send(.found(ScannedDevice(address: "C8:FD:19:12:34:57", name: "hmsoft", profile: .hm10)))
        try pick("C8:FD:19:12:34:56", core, loop)
        XCTAssertEqual(saves.last, "ble://C8:FD:19:12:34:56")
        // A name that needs escaping is escaped, and parses back.
        var state = BluetoothSearchState()
        let spaced = ScannedDevice(address: "C8:FD:19:00:00:02", name: "Red car", profile: .microchip)
        state.devices = [spaced]
        XCTAssertEqual(state.linkURL(for: spaced), "ble://Red%20car")
        XCTAssertEqual(try LinkURL(parsing: state.linkURL(for: spaced)), .bleDevice(name: "Red car"))
    }

    /// The profile learnt from one update stays when a later one comes without the services.
    func testAnUpdateKeepsTheProfileAndTransports() throws {
        let (loop, core, _, _) = try make()
        core.handle(.message(.bluetoothScan), from: 1)
        scanners[0].send(.found(ScannedDevice(address: "24:0A:C4:00:00:01", profile: .nordic, transports: .le)))
        scanners[0].send(.found(ScannedDevice(address: "24:0A:C4:00:00:01", name: "ESP32car", rssi: -70, transports: .bredr)))
        XCTAssertEqual(core.bluetoothSearch.devices, [
            ScannedDevice(address: "24:0A:C4:00:00:01", name: "ESP32car", rssi: -70, profile: .nordic, transports: [.le, .bredr]),
        ])
        try pick("24:0A:C4:00:00:01", core, loop)
        XCTAssertEqual(saves, ["ble://ESP32car"])
    }

    func testPickOnlyAnAddressOfTheCurrentResults() throws {
        let (loop, core, hub, bridge) = try make()
        let linkName = bridge.link.name
        // Before any search: refused, nothing saved.
        try pick("98:D3:31:F5:2A:11", core, loop)
        XCTAssertEqual(saves, [])
        XCTAssertEqual(core.bluetoothSearch.message, "not saved: 98:D3:31:F5:2A:11 was not found by the last search")
        core.handle(.message(.bluetoothScan), from: 1)
        scanners[0].send(.found(hc05))
        try pick("00:11:22:33:44:55", core, loop)
        XCTAssertEqual(saves, [])
        // One of the results: saved, during the search or after it.
        try pick("98:D3:31:F5:2A:11", core, loop)
        XCTAssertEqual(saves, ["rfcomm://98:D3:31:F5:2A:11"])
        XCTAssertEqual(core.bluetoothSearch.saved, "rfcomm://98:D3:31:F5:2A:11")
        XCTAssertEqual(core.bluetoothSearch.message,
            #"saved link.url = "rfcomm://98:D3:31:F5:2A:11" in /etc/carbridge/red.toml; takes effect at the next start (the running link is not switched)"#)
        let json = try XCTUnwrap(hub.latestJSON(now: loop.now()))
        XCTAssertTrue(json.contains(#""saved":"rfcomm://98:D3:31:F5:2A:11""#), json)
        XCTAssertEqual(bridge.link.name, linkName, "the running link is not switched")
        // A save that fails says why.
        saver.result = .failure(ConfigErrors([ConfigError(
            file: "(no config file)", line: nil, key: "link.url", message: "this run was started without a config file")]))
        try loop.advance(by: .seconds(12))
        try pick("98:D3:31:F5:2A:11", core, loop)
        XCTAssertEqual(saves.count, 2)
        XCTAssertEqual(core.bluetoothSearch.message,
            "not saved (rfcomm://98:D3:31:F5:2A:11): (no config file): link.url: this run was started without a config file")
    }
}

/// A link that records each frame with the loop's time.
final class TimedLink: CarLink {
    let name = "timed"
    private(set) var state: LinkState = .down(reason: "not started")
    var onStateChange: ((LinkState) -> Void)?
    var onLine: ((CarLine) -> Void)?
    private(set) var frames: [(text: String, time: Instant)] = []
    private let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    func start() {
        state = .up
        onStateChange?(.up)
    }
    func send(_ frame: Frame) { frames.append((frame.text, loop.now())) }
    func flush(within: Duration, then done: @escaping (FlushResult) -> Void) { loop.execute { done(.delivered) } }
    func shutdown(flushWithin: Duration, then done: @escaping (FlushResult) -> Void) { loop.execute { done(.delivered) } }
}

/// Issue 39: nothing on the loop waits for the disk. A car picked on the dashboard is saved while the car
/// drives, on a disk that takes 500 ms (an SD card syncing): the 50 ms stream keeps its period and a stop
/// asked for meanwhile goes out when asked, on the real clock.
final class SlowDiskDuringADriveTests: XCTestCase {
    func testTheStreamKeepsItsPeriodAndAStopGoesOutAtOnceWhileThePickIsSaved() throws {
        let loop = try EventLoop()
        let link = TimedLink(loop: loop)
        let bridge = Bridge(settings: DriveSettings(), link: link, loop: loop, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let model = RunViewModel(of: bridge)
        bridge.events.subscribe(model)
        let saver = RecordingSaver()
        saver.delay = .milliseconds(500)
        let scanner = FakeScanner()
        let core = DashboardLoop(
            port: bridge, state: bridge.state, link: bridge.link.state, model: model, loop: loop, metrics: DashboardMetrics(), maxSpeed: 240,
            scanner: { scanner }, saveLink: { [saver] (url: String) throws(ConfigErrors) -> String in try saver.save(url) })
        core.hub = DashboardHub { _, _ in }
        defer { core.detach() }
        bridge.start()
        bridge.apply(.engine)
        bridge.apply(.speedUp)
        core.handle(.message(.bluetoothScan), from: 1)
        scanner.send(.found(ScannedDevice(address: "98:D3:31:F5:2A:11", rssi: -58)))
        try loop.run(until: loop.now().advanced(by: .milliseconds(120)))

        let pickedAt = loop.now()
        core.handle(.message(.bluetoothPick(address: "98:D3:31:F5:2A:11")), from: 1)
        let stopDue = pickedAt.advanced(by: .milliseconds(150))
        var stopAskedAt: Instant?
        _ = loop.schedule(at: stopDue) {
            stopAskedAt = loop.now()
            bridge.apply(.engine)
        }
        try loop.run(until: pickedAt.advanced(by: .milliseconds(800)))

        let asked = try XCTUnwrap(stopAskedAt)
        XCTAssertLessThan(asked.duration(since: stopDue), .milliseconds(100), "the stop's timer ran when due, not after the save")
        let stop = try XCTUnwrap(link.frames.first { $0.text == "E,0,0,0" && $0.time >= pickedAt }, "\(link.frames.map(\.text))")
        XCTAssertLessThan(stop.time.duration(since: asked), .milliseconds(10), "the stop frame went out when asked")
        let stream = link.frames.filter { $0.text == "M,0,10,1" && $0.time >= pickedAt && $0.time <= asked }.map(\.time)
        XCTAssertGreaterThanOrEqual(stream.count, 2, "the stream went on during the save: \(link.frames.map(\.text))")
        var previous = pickedAt
        for time in stream {
            XCTAssertLessThan(time.duration(since: previous), .milliseconds(100), "no gap in the 50 ms stream while the file is saved")
            previous = time
        }
        XCTAssertEqual(saver.saves, ["rfcomm://98:D3:31:F5:2A:11"])
        XCTAssertTrue(core.bluetoothSearch.message.hasPrefix("saved link.url"), core.bluetoothSearch.message)
    }
}
