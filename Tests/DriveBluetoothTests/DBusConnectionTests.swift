import DriveBluetooth
import DriveCore
import DriveSystem
import Foundation
import XCTest

/// The sd-bus client on the event loop against a private `dbus-daemon --session` (skipped without one):
/// calls, errors, an exported object answering another connection, signals, all without blocking.
final class DBusConnectionTests: XCTestCase {
    var daemon: Process?
    var address = ""

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { throw XCTSkip("no dbus-daemon") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        daemon = process
        var text = ""
        while !text.contains("\n") {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        address = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !address.isEmpty else { throw XCTSkip("dbus-daemon printed no address") }
    }

    override func tearDown() {
        daemon?.terminate()
        daemon?.waitUntilExit()
    }

    func spin(_ loop: EventLoop, seconds: Double = 5, until done: () -> Bool) {
        let deadline = loop.now().advanced(by: .milliseconds(Int64(seconds * 1000)))
        while !done(), loop.now() < deadline {
            try? loop.runOnce(timeout: .milliseconds(100))
        }
    }

    func testCallsObjectsAndSignalsOnOneLoop() throws {
        let loop = try EventLoop()
        let server = try DBusConnection(loop: loop, bus: .address(address))
        let client = try DBusConnection(loop: loop, bus: .address(address))
        defer { server.close(); client.close() }

        var calls: [DBusConnection.MethodCall] = []
        server.exportObject(path: "/org/carbridge/Test") { call in
            calls.append(call)
            switch call.member {
            case "Echo": return .values(call.arguments)
            case "Fail": return .error(DBusError(name: "org.carbridge.Error.Nope", message: "no"))
            default: return .unhandled
            }
        }
        var owned: Result<[DBusValue], DBusError>?
        server.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "RequestName", arguments: [.string("org.carbridge.Test"), .uint32(0)]) { owned = $0 }
        spin(loop) { owned != nil }
        XCTAssertEqual(try owned?.get(), [.uint32(1)])  // primary owner

        var signals: [DBusConnection.Signal] = []
        client.onSignal(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
            signals.append($0)
        }
        let arguments: [DBusValue] = [
            .string("HC-05"), .bool(true), .int16(-52), .objectPath("/org/bluez/hci0"),
            .properties(["Name": .string("HC-05"), "UUIDs": .array("s", [.string(serialPortUUID)])]),
            .array("y", [.byte(1), .byte(2)]), .structure([.uint64(7), .double(0.5)]),
        ]
        var echoed: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Echo", arguments: arguments) { echoed = $0 }
        spin(loop) { echoed != nil }
        XCTAssertEqual(try echoed?.get(), arguments)
        XCTAssertEqual(calls.first?.interface, "org.carbridge.Test")

        var failed: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Fail") { failed = $0 }
        spin(loop) { failed != nil }
        guard case .failure(let error)? = failed else { return XCTFail("no error reply") }
        XCTAssertEqual(error.name, "org.carbridge.Error.Nope")

        var unknown: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Other") { unknown = $0 }
        spin(loop) { unknown != nil }
        guard case .failure(let unknownError)? = unknown else { return XCTFail("an unhandled method answered") }
        XCTAssertEqual(unknownError.name, "org.freedesktop.DBus.Error.UnknownMethod")

        var missing: Result<[DBusValue], DBusError>?
        client.call(destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                    member: "GetManagedObjects") { missing = $0 }
        spin(loop) { missing != nil }
        guard case .failure(let missingError)? = missing else { return XCTFail("org.bluez answered") }
        XCTAssertTrue(missingError.meansServiceMissing, "\(missingError)")

        // a signal: another name appears on the bus
        var second: Result<[DBusValue], DBusError>?
        server.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "RequestName", arguments: [.string("org.carbridge.Other"), .uint32(0)]) { second = $0 }
        spin(loop) { signals.contains { $0.arguments.first?.string == "org.carbridge.Other" } }
        XCTAssertNotNil(second)
        XCTAssertTrue(signals.contains { $0.member == "NameOwnerChanged" && $0.arguments.first?.string == "org.carbridge.Other" })
    }

    func testNoSuchBusThrows() throws {
        let loop = try EventLoop()
        XCTAssertThrowsError(try DBusConnection(loop: loop, bus: .address("unix:path=/nonexistent/bus"))) { error in
            XCTAssertEqual((error as? DBusError)?.name, "carbridge.Error.NoBus")
        }
    }

    /// The dashboard's discovery on a loop the caller runs: a bus where nobody owns org.bluez gives
    /// `scan`'s sentence, once, without blocking the loop; stopping after that is harmless.
    func testDiscoveryWithoutBluetoothdFailsWithTheSentence() throws {
        let loop = try EventLoop()
        let discovery = BlueZDiscovery(loop: loop, bus: .address(address))
        var events: [String] = []
        discovery.start { event in
            switch event {
            case .failed(let failure): events.append("failed: \(failure.description) \(failure.noBluetoothd)")
            case .started(let adapter): events.append("started \(adapter.name)")
            case .found(let device): events.append("found \(device.address)")
            }
        }
        XCTAssertEqual(events, [], "nothing before the loop runs: the call is asynchronous")
        spin(loop) { !events.isEmpty }
        XCTAssertEqual(events, ["failed: bluetoothd is not running (nobody owns org.bluez on the system bus) true"])
        discovery.stop()
        spin(loop, seconds: 0.3) { false }
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
