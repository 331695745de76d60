import DriveBluetooth
import DriveSystem
import DriveTestSupport
import XCTest

/// The dashboard's Bluetooth discovery against a private `dbus-daemon --session` where nobody owns
/// org.bluez (skipped without one), and without any bus at all.
final class BlueZDiscoveryTests: XCTestCase {
    func testDiscoveryWithoutBluetoothdFailsWithTheSentence() throws {
        guard let bus = try PrivateBus() else { throw XCTSkip("no dbus-daemon, or it printed no address") }
        defer { bus.stop() }
        let loop = try EventLoop()
        let discovery = BlueZDiscovery(loop: loop, bus: .address(bus.address))
        var events: [String] = []
        discovery.start { event in
            switch event {
            case .failed(let failure): events.append("failed: \(failure.description) \(failure.noBluetoothd)")
            case .started(let adapter): events.append("started \(adapter.name)")
            case .found(let device): events.append("found \(device.address)")
            }
        }
        XCTAssertEqual(events, [], "nothing before the loop runs: the call is asynchronous")
        try spin(loop) { !events.isEmpty }
        XCTAssertEqual(events, ["failed: bluetoothd is not running (nobody owns org.bluez on the system bus) true"])
        discovery.stop()
        try spin(loop, timeout: .milliseconds(300)) { false }
        XCTAssertEqual(events.count, 1)
    }

    func testDiscoveryWithoutABusFailsAtOnce() throws {
        let loop = try EventLoop()
        let discovery = BlueZDiscovery(loop: loop, bus: .address("unix:path=/nonexistent/bus"))
        var failure: BluetoothFailure?
        discovery.start { event in if case .failed(let error) = event { failure = error } }
        XCTAssertEqual(failure?.noBluetoothd, true)
        XCTAssertTrue(failure?.description.hasPrefix("cannot connect to the D-Bus system bus") == true, "\(String(describing: failure))")
    }
}
