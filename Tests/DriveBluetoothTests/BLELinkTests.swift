import DriveBluetooth
import DriveCore
import DriveDBus
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

/// The BLE link against a fake bluetoothd (`FakeBlueZ`) on the manual clock: finding the car, the UART
/// profile, the write rules (one acknowledged write at a time, one frame per write, MTU − 3), every loss
/// signal in either order, the stall, the shutdown.
final class BLELinkTests: XCTestCase {
    static let car = "C8:FD:19:12:34:56"
    var loop: EventLoop!
    var bluez: FakeBlueZ!
    var notices: [String] = []

    override func setUpWithError() throws {
        loop = try makeManualLoop()
        bluez = FakeBlueZ(loop: loop)
        notices = []
    }

    override func tearDown() {
        bluez = nil
        loop = nil
    }

    func makeLink(_ target: BLELink.Target = .name("HMSoft"), options: LinkOptions = LinkOptions()) -> BLELink {
        let bluez = self.bluez!
        return BLELink(target: target, loop: loop, options: options, notice: { [weak self] in self?.notices.append($0) },
                       bus: { bluez })
    }

    /// Starts `link` and runs until it is up.
    func bringUp(_ link: BLELink, _ recorder: LinkRecorder) throws {
        link.start()
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { link.state == .up }, "states: \(recorder.states)")
    }

    func testFindsTheCarByNameAndWritesEachFrameAsOneAcknowledgedWriteRequest() throws {
        let path = bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        XCTAssertEqual(link.name, "ble://HMSoft")
        XCTAssertEqual(recorder.states, [.connecting, .up])
        XCTAssertEqual(bluez.log.prefix(4), [
            "ObjectManager.GetManagedObjects /", "Device1.Connect \(path)", "ObjectManager.GetManagedObjects /",
            "GattCharacteristic1.AcquireNotify \(path)/service0010/char0011",
        ])
        XCTAssertFalse(bluez.log.contains { $0.contains("StartDiscovery") }, "a known car needs no discovery")
        XCTAssertEqual(notices.count, 1)
        XCTAssertTrue(notices[0].contains("HM-10 (service ffe0, write ffe1, notify ffe1)"), notices[0])
        XCTAssertTrue(notices[0].contains("write requests, one at a time"), notices[0])
        XCTAssertTrue(notices[0].contains("at most 20 bytes per write"), notices[0])

        link.send(.engineOff)
        link.send(.motion(range: 0, speed: 10, direction: 1))
        XCTAssertTrue(try spin(loop) { self.bluez.written.count == 2 })
        XCTAssertEqual(bluez.written, ["E,0,0,0\n", "M,0,10,1\n"])
        XCTAssertEqual(bluez.writeTypes, ["request", "request"])
        XCTAssertEqual(link.transport.writesCompleted, 2)
    }

    /// The order guarantee: the next write starts only once the car acknowledged the last, so no frame can
    /// overtake an older one on any ATT bearer; meanwhile motion frames coalesce (newest wins), E/F keep order.
    /// Once a bridge listens (`onNotice`), the link's notices go there: the run's events, not the closure it
    /// was made with (stderr in `LinkFactory`).
    func testNoticesGoToTheBridgeOnceItListens() throws {
        _ = bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        var told: [String] = []
        link.onNotice = { told.append($0) }
        try bringUp(link, LinkRecorder(link))
        XCTAssertEqual(notices, [], "not the closure it was made with")
        XCTAssertEqual(told.count, 1)
        XCTAssertTrue(told.first?.contains("HM-10") == true, "\(told)")
    }

    func testTheNextWriteWaitsForTheCarsAcknowledgementAndMotionFramesCoalesce() throws {
        bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        bluez.holdWrites = true
        link.send(.motion(range: 0, speed: 10, direction: 1))
        link.send(.motion(range: 0, speed: 20, direction: 1))
        link.send(.motion(range: 1, speed: 30, direction: 1))
        link.send(.motion(range: 1, speed: 0, direction: 1))  // the stop
        link.send(.engineOff)
        try DriveTestSupport.run(loop, for: .milliseconds(300))
        XCTAssertEqual(bluez.pendingWrites.count, 1, "one write at a time")
        XCTAssertEqual(bluez.written, ["M,0,10,1\n"])
        bluez.answerWrite()
        XCTAssertTrue(try spin(loop) { self.bluez.written.count == 2 })
        // M,0,20,1 and R,1,30,1 were replaced by the newest motion frame, the stop.
        XCTAssertEqual(bluez.written.last, "R,1,0,1\n")
        XCTAssertEqual(bluez.pendingWrites.count, 1)
        bluez.answerWrite()
        XCTAssertTrue(try spin(loop) { self.bluez.written.count == 3 })
        XCTAssertEqual(bluez.written.last, "E,0,0,0\n")
        bluez.answerWrite()
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertEqual(bluez.written.count, 3)
        XCTAssertEqual(link.state, .up)
    }

    func testAnUnknownCarIsDiscoveredOverLEThenConnected() throws {
        let link = makeLink()
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { self.bluez.log.contains { $0.hasPrefix("Adapter1.StartDiscovery") } })
        let filter = bluez.log.firstIndex { $0.hasPrefix("Adapter1.SetDiscoveryFilter") }
        XCTAssertNotNil(filter, "LE discovery filter set: \(bluez.log)")
        let path = bluez.addCar(address: Self.car, name: "HMSoft", announce: true)
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { link.state == .up }, "\(recorder.states) \(bluez.log)")
        let stop = bluez.log.firstIndex { $0.hasPrefix("Adapter1.StopDiscovery") }
        let connect = bluez.log.firstIndex { $0 == "Device1.Connect \(path)" }
        XCTAssertNotNil(stop)
        XCTAssertNotNil(connect)
        XCTAssertLessThan(stop ?? .max, connect ?? 0, "discovery stops before the connect")
    }

    func testByAddressAndAnotherCarOfTheSameNameIsIgnored() throws {
        bluez.addCar(address: "11:22:33:44:55:66", name: "HMSoft")
        let path = bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink(.address(Self.car))
        try bringUp(link, LinkRecorder(link))
        XCTAssertEqual(link.name, "ble://\(Self.car)")
        XCTAssertTrue(bluez.log.contains("Device1.Connect \(path)"))
    }

    func testTwoCarsOfTheNameAreRefusedWithTheirAddresses() throws {
        bluez.addCar(address: "11:22:33:44:55:66", name: "HMSoft")
        bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop) { if case .down = link.state { return true } else { return false } })
        guard case .down(let reason) = link.state else { return XCTFail() }
        XCTAssertTrue(reason.contains("11:22:33:44:55:66") && reason.contains(Self.car) && reason.contains("ble://ADDRESS"), reason)
        XCTAssertFalse(bluez.log.contains { $0.hasPrefix("Device1.Connect") })
        XCTAssertEqual(recorder.states.count, 2)
    }

    func testNoCarFoundWithinTheConnectTimeoutSaysSoAndRetriesWithBackOff() throws {
        let link = makeLink(options: LinkOptions(connectTimeout: .seconds(2)))
        let recorder = LinkRecorder(link)
        link.start()
        try DriveTestSupport.run(loop, for: .milliseconds(2100))
        guard case .down(let reason) = link.state else { return XCTFail("\(recorder.states)") }
        XCTAssertTrue(reason.contains("no Bluetooth LE car \"HMSoft\" found within 2 s"), reason)
        XCTAssertTrue(bluez.log.contains { $0.hasPrefix("Adapter1.StopDiscovery") })
        try DriveTestSupport.run(loop, for: .milliseconds(500))
        XCTAssertEqual(link.connectAttempts, 2, "reconnect after 0.5 s")
    }

    func testTheCarsLinesComeFromTheNotifySocket() throws {
        bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        bluez.notify("OK car ready fail")
        bluez.notify("safe=300\nBAT,80\r\n")
        XCTAssertTrue(try spin(loop) { recorder.lines.count == 2 })
        XCTAssertEqual(recorder.lines, ["OK car ready failsafe=300", "BAT,80"])
    }

    // MARK: loss

    /// Each way a BLE link is lost, alone and followed by each other one: the link goes down once, with
    /// the first signal's reason, and reconnects after the back-off.
    func testEveryLossSignalInEitherOrderTakesTheLinkDownOnce() throws {
        let signals: [(name: String, expect: String, fire: (FakeBlueZ, String) -> Void)] = [
            ("Connected", "Connected = false", { bluez, path in bluez.dropLink(path, order: ["Connected", "ServicesResolved"]) }),
            ("ServicesResolved", "ServicesResolved = false", { bluez, path in bluez.dropLink(path) }),
            ("InterfacesRemoved", "UART service went away", { bluez, path in bluez.removeServices(of: path) }),
            ("notify hang-up", "hung up its notifications", { bluez, _ in bluez.hangUpNotify() }),
            ("bus", "D-Bus connection to bluetoothd closed", { bluez, _ in bluez.failBus() }),
        ]
        for first in signals.indices {
            for second in signals.indices where second != first {
                try setUpWithError()
                let path = bluez.addCar(address: Self.car, name: "HMSoft")
                let link = makeLink()
                let recorder = LinkRecorder(link)
                try bringUp(link, recorder)
                signals[first].fire(bluez, path)
                XCTAssertTrue(try spin(loop, timeout: .milliseconds(100)) { link.state != .up }, "\(signals[first].name)")
                signals[second].fire(bluez, path)
                try DriveTestSupport.run(loop, for: .milliseconds(100))
                let what = "\(signals[first].name) then \(signals[second].name)"
                let downs = recorder.states.filter { if case .down = $0 { return true } else { return false } }
                XCTAssertEqual(downs.count, 1, "\(what): \(recorder.states)")
                guard case .down(let reason)? = downs.first else { continue }
                XCTAssertTrue(reason.contains(signals[first].expect), "\(what): \(reason)")
                try DriveTestSupport.run(loop, for: .milliseconds(500))
                XCTAssertEqual(link.connectAttempts, 2, "\(what): reconnects after the back-off")
            }
        }
    }

    func testAWriteTheCarRefusesTakesTheLinkDownAndDisconnects() throws {
        let path = bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        bluez.refuse["WriteValue"] = DBusError(name: "org.bluez.Error.Failed", message: "Not connected")
        link.send(.motion(range: 0, speed: 10, direction: 1))
        XCTAssertTrue(try spin(loop) { link.state != .up })
        guard case .down(let reason) = link.state else { return XCTFail() }
        XCTAssertTrue(reason.contains("Not connected"), reason)
        XCTAssertTrue(bluez.log.contains("Device1.Disconnect \(path)"))
    }

    /// A write the car does not acknowledge within the stall timeout (§6): the link is down and the car is
    /// disconnected, so nothing bluetoothd still holds reaches it later; nothing queued survives the loss.
    func testAnUnacknowledgedWriteIsAStall() throws {
        let path = bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        bluez.holdWrites = true
        link.send(.motion(range: 0, speed: 50, direction: 1))
        link.send(.motion(range: 0, speed: 60, direction: 1))
        try DriveTestSupport.run(loop, for: .milliseconds(200))
        // The fake holds the reply; the real bus answers NoReply at the call's timeout (the stall timeout).
        bluez.answerWrite(DBusError(name: "org.freedesktop.DBus.Error.NoReply", message: "Method call timed out"))
        XCTAssertTrue(try spin(loop) { link.state != .up })
        guard case .down(let reason) = link.state else { return XCTFail() }
        XCTAssertTrue(reason.contains("did not acknowledge a frame within 1 s"), reason)
        XCTAssertTrue(bluez.log.contains("Device1.Disconnect \(path)"))
        bluez.holdWrites = false
        XCTAssertTrue(try spin(loop, timeout: .seconds(2)) { link.state == .up })
        XCTAssertEqual(bluez.written, ["M,0,50,1\n"], "the queued M,0,60,1 was dropped with the link")
    }

    // MARK: shutdown

    func testShutdownWaitsForTheCarToAcknowledgeThenDisconnects() throws {
        let path = bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        bluez.holdWrites = true
        link.send(.engineOff)
        var result: FlushResult?
        link.shutdown(flushWithin: .seconds(1)) { result = $0 }
        try DriveTestSupport.run(loop, for: .milliseconds(100))
        XCTAssertNil(result, "waits for the acknowledgement")
        XCTAssertFalse(bluez.log.contains("Device1.Disconnect \(path)"))
        bluez.answerWrite()
        XCTAssertTrue(try spin(loop) { result != nil })
        XCTAssertEqual(result, .delivered)
        XCTAssertEqual(bluez.written, ["E,0,0,0\n"])
        XCTAssertTrue(bluez.log.contains("Device1.Disconnect \(path)"))
        XCTAssertEqual(link.state, .closed)
        XCTAssertEqual(bluez.log.last, "close")
    }

    func testShutdownWithAStuckWriteEndsAtTheFlushWindow() throws {
        bluez.addCar(address: Self.car, name: "HMSoft")
        let link = makeLink()
        try bringUp(link, LinkRecorder(link))
        bluez.holdWrites = true
        link.send(.engineOff)
        var result: FlushResult?
        link.shutdown(flushWithin: .milliseconds(500)) { result = $0 }
        try DriveTestSupport.run(loop, for: .milliseconds(1000))
        XCTAssertEqual(result, .timedOut)
        XCTAssertEqual(link.state, .closed)
    }

    // MARK: profiles and write modes

    func testANordicUARTCarWritesToRXAndHearsTX() throws {
        let path = bluez.addCar(address: Self.car, name: "NUSCar") { car in
            car.serviceUUID = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
            car.characteristics = [
                ("6e400002-b5a3-f393-e0a9-e50e24dcca9e", ["write-without-response", "write"]),
                ("6e400003-b5a3-f393-e0a9-e50e24dcca9e", ["notify"]),
            ]
            car.mtu = 247
        }
        let link = makeLink(.name("NUSCar"))
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        XCTAssertTrue(bluez.log.contains("GattCharacteristic1.AcquireNotify \(path)/service0010/char0014"), "\(bluez.log)")
        XCTAssertTrue(notices.first?.contains("Nordic UART") == true, "\(notices)")
        XCTAssertEqual(link.transport.payloadLimit, 244, "MTU − 3")
        link.send(.engineOff)
        XCTAssertTrue(try spin(loop) { !self.bluez.written.isEmpty })
        XCTAssertTrue(bluez.log.contains("GattCharacteristic1.WriteValue \(path)/service0010/char0011"))
    }

    /// A characteristic that takes only write commands: the AcquireWrite socket, one frame per packet
    /// (a SEQPACKET write is one ATT write), motion frames paced so bluetoothd's queue cannot grow.
    func testWriteWithoutResponseOnlyGoesThroughAcquireWriteOneFramePerPacket() throws {
        bluez.addCar(address: Self.car, name: "HMSoft") { car in
            car.characteristics = [("0000ffe1-0000-1000-8000-00805f9b34fb", ["write-without-response", "notify"])]
        }
        let link = makeLink()
        try bringUp(link, LinkRecorder(link))
        XCTAssertTrue(notices.first?.contains("write commands through AcquireWrite") == true, "\(notices)")
        link.send(.engineOff)
        link.send(.motion(range: 0, speed: 10, direction: 1))
        link.send(Frame(kind: .f1, range: 0, speed: 10, direction: 1))
        link.send(.motion(range: 0, speed: 20, direction: 1))
        link.send(.motion(range: 0, speed: 30, direction: 1))
        try loop.runOnce(timeout: .zero)
        XCTAssertEqual(bluez.readWritePackets(), ["E,0,0,0\n", "M,0,10,1\n", "F,0,10,1\n"])
        try DriveTestSupport.run(loop, for: .milliseconds(25))
        XCTAssertEqual(bluez.readWritePackets(), ["M,0,30,1\n"], "paced, newest wins")
        XCTAssertTrue(bluez.written.isEmpty, "no WriteValue")
    }

    /// Issue 39: write commands through a socket that stops taking frames (EAGAIN: bluetoothd's queue full,
    /// the radio gone quiet). Waiting frames are a stall after `stallTimeout`, as an unacknowledged write
    /// request is: the link goes down with the reason, the radio link is dropped (nothing queued may arrive
    /// later), and it comes back by itself after the back-off, writing again (the bridge's handshake first).
    func testAnAcquiredWriteSocketThatStaysFullIsAStallAndTheLinkComesBack() throws {
        _ = bluez.addCar(address: Self.car, name: "HMSoft") { car in
            car.characteristics = [("0000ffe1-0000-1000-8000-00805f9b34fb", ["write-without-response", "notify"])]
        }
        bluez.writeSocketBuffer = 2048
        let link = makeLink(options: LinkOptions(stallTimeout: .milliseconds(500)))
        let recorder = LinkRecorder(link)
        try bringUp(link, recorder)
        // F-keys are not paced: they fill the socket the car does not read.
        for n in 0..<64 { link.send(Frame(kind: .function(1 + n % 5) ?? .f1, range: 0, speed: 0, direction: 1)) }
        try loop.runOnce(timeout: .zero)
        XCTAssertEqual(link.state, .up, "a full socket is not yet a stall")
        let full = loop.now()
        try DriveTestSupport.run(loop, for: .milliseconds(499))
        XCTAssertEqual(link.state, .up)
        try DriveTestSupport.run(loop, for: .milliseconds(1))
        guard case .down(let reason) = link.state else { return XCTFail("still \(link.state) \(loop.now().duration(since: full))") }
        XCTAssertTrue(reason.contains("took no frame for 0.5 s"), reason)
        XCTAssertEqual(link.stalls, 1)
        XCTAssertNotNil(link.lastRetryDelay, "the dashboard's countdown has a delay")
        XCTAssertTrue(bluez.log.contains { $0.hasPrefix("Device1.Disconnect") }, "the radio link is dropped")
        // It comes back, and writes again through a fresh socket.
        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { link.state == .up }, "\(recorder.states)")
        link.send(.engineOff)
        try loop.runOnce(timeout: .zero)
        XCTAssertEqual(bluez.readWritePackets(), ["E,0,0,0\n"])
    }

    func testACarWithoutAKnownUARTServiceIsRefusedWithWhatItOffers() throws {
        bluez.addCar(address: Self.car, name: "HMSoft") { car in
            car.serviceUUID = "0000180f-0000-1000-8000-00805f9b34fb"
        }
        let link = makeLink()
        link.start()
        XCTAssertTrue(try spin(loop) { if case .down = link.state { return true } else { return false } })
        guard case .down(let reason) = link.state else { return XCTFail() }
        XCTAssertTrue(reason.contains("no known BLE serial service") && reason.contains("180f") && reason.contains("ble_service"), reason)
        XCTAssertTrue(bluez.log.contains { $0.hasPrefix("Device1.Disconnect") }, "the half-made connection is dropped")
    }

    func testAConfiguredProfileIsUsed() throws {
        let custom = BLEUARTProfile(name: "custom", service: "180f", write: "2a19", notify: "2a19")!
        bluez.addCar(address: Self.car, name: "Odd") { car in
            car.serviceUUID = custom.service
            car.characteristics = [(custom.write, ["write", "notify"])]
        }
        let link = makeLink(.name("Odd"), options: LinkOptions(bleProfile: custom))
        try bringUp(link, LinkRecorder(link))
        XCTAssertTrue(notices.first?.contains("custom (service 180f, write 2a19, notify 2a19)") == true, "\(notices)")
    }
}
