import DriveCore
import DriveDBus
import DriveSystem
import DriveTestSupport
import XCTest

/// The sd-bus client on the event loop against a private `dbus-daemon --session` (`PrivateBus`; skipped
/// without one): calls, errors, an exported object answering another connection, signals, all without blocking.
final class DBusConnectionTests: XCTestCase {
    func testCallsObjectsAndSignalsOnOneLoop() throws {
        guard let bus = try PrivateBus() else { throw XCTSkip("no dbus-daemon, or it printed no address") }
        defer { bus.stop() }
        let loop = try EventLoop()
        let server = try DBusConnection(loop: loop, bus: .address(bus.address))
        let client = try DBusConnection(loop: loop, bus: .address(bus.address))
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
        try spin(loop) { owned != nil }
        XCTAssertEqual(try owned?.get(), [.uint32(1)])  // primary owner

        var signals: [DBusConnection.Signal] = []
        client.onSignal(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
            signals.append($0)
        }
        let arguments: [DBusValue] = [
            .string("HC-05"), .bool(true), .int16(-52), .objectPath("/org/bluez/hci0"),
            .properties(["Name": .string("HC-05"), "UUIDs": .array("s", [.string("00001101-0000-1000-8000-00805f9b34fb")])]),
            .array("y", [.byte(1), .byte(2)]), .structure([.uint64(7), .double(0.5)]),
        ]
        var echoed: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Echo", arguments: arguments) { echoed = $0 }
        try spin(loop) { echoed != nil }
        XCTAssertEqual(try echoed?.get(), arguments)
        XCTAssertEqual(calls.first?.interface, "org.carbridge.Test")

        // A byte array written in one call (a BLE frame) reads back as the same `ay`.
        var frame: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Echo", arguments: [.bytes(Array("M,0,40,1\n".utf8)), .bytes([])]) { frame = $0 }
        try spin(loop) { frame != nil }
        XCTAssertEqual(try frame?.get(), [.array("y", Array("M,0,40,1\n".utf8).map { .byte($0) }), .array("y", [])])

        var failed: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Fail") { failed = $0 }
        try spin(loop) { failed != nil }
        guard case .failure(let error)? = failed else { return XCTFail("no error reply") }
        XCTAssertEqual(error.name, "org.carbridge.Error.Nope")

        var unknown: Result<[DBusValue], DBusError>?
        client.call(destination: "org.carbridge.Test", path: "/org/carbridge/Test", interface: "org.carbridge.Test",
                    member: "Other") { unknown = $0 }
        try spin(loop) { unknown != nil }
        guard case .failure(let unknownError)? = unknown else { return XCTFail("an unhandled method answered") }
        XCTAssertEqual(unknownError.name, "org.freedesktop.DBus.Error.UnknownMethod")

        var missing: Result<[DBusValue], DBusError>?
        client.call(destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                    member: "GetManagedObjects") { missing = $0 }
        try spin(loop) { missing != nil }
        guard case .failure(let missingError)? = missing else { return XCTFail("org.bluez answered") }
        XCTAssertTrue(missingError.meansServiceMissing, "\(missingError)")

        // a signal: another name appears on the bus
        var second: Result<[DBusValue], DBusError>?
        server.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "RequestName", arguments: [.string("org.carbridge.Other"), .uint32(0)]) { second = $0 }
        try spin(loop) { signals.contains { $0.arguments.first?.string == "org.carbridge.Other" } }
        XCTAssertNotNil(second)
        XCTAssertTrue(signals.contains { $0.member == "NameOwnerChanged" && $0.arguments.first?.string == "org.carbridge.Other" })
    }

    func testNoSuchBusThrows() throws {
        let loop = try EventLoop()
        XCTAssertThrowsError(try DBusConnection(loop: loop, bus: .address("unix:path=/nonexistent/bus"))) { error in
            XCTAssertEqual((error as? DBusError)?.name, "carbridge.Error.NoBus")
        }
    }
}
