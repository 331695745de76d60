import DriveCore
import DriveDBus
import DriveSystem
import Glibc

/// bluetoothd's D-Bus API (`org.bluez`) on an event loop: objects, discovery, pairing with an agent,
/// trust, removal. Every call is asynchronous; `BlueZSession` wraps them for one-shot commands.
package final class BlueZClient {
    package static let service = "org.bluez"
    package let connection: DBusConnection
    package let loop: EventLoop
    /// The devices as the signals (`watchDevices`) keep them.
    package private(set) var devices: [String: BluetoothDevice] = [:]
    private var watchTokens: [DBusConnection.Token] = []

    package init(loop: EventLoop, bus: DBusConnection.Bus = .system) throws(DBusError) {
        self.loop = loop
        connection = try DBusConnection(loop: loop, bus: bus)
    }

    package func close() {
        for token in watchTokens { token.cancel() }
        watchTokens.removeAll()
        connection.close()
    }

    /// `GetManagedObjects`: every adapter and device bluetoothd knows.
    package func managedObjects(_ done: @escaping (Result<BlueZObjects, DBusError>) -> Void) {
        connection.call(destination: Self.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                        member: "GetManagedObjects", timeout: .seconds(10)) { [weak self] result in
            let objects = result.map { BlueZObjects(managedObjects: $0) }
            if case .success(let objects) = objects, let self {
                for device in objects.devices where self.devices[device.path] == nil { self.devices[device.path] = device }
            }
            done(objects)
        }
    }

    /// Follows `InterfacesAdded` and `PropertiesChanged` of devices under `adapterPath` (nil: all);
    /// `changed` gets the device after each update and the names of the properties that came.
    package func watchDevices(adapterPath: String?, _ changed: @escaping (BluetoothDevice, Set<String>) -> Void) {
        let prefix = adapterPath.map { $0 + "/" } ?? "/org/bluez/"
        watchTokens.append(connection.onSignal(
            sender: Self.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"
        ) { [weak self] signal in
            guard let self, let path = signal.arguments.first?.string, path.hasPrefix(prefix),
                  let interfaces = signal.arguments.dropFirst().first?.dictionary,
                  let properties = interfaces["org.bluez.Device1"]?.dictionary else { return }
            var device = self.devices[path] ?? BluetoothDevice(path: path)
            device.apply(properties)
            self.devices[path] = device
            changed(device, Set(properties.keys).union(["InterfacesAdded"]))
        })
        watchTokens.append(connection.onSignal(
            sender: Self.service, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"
        ) { [weak self] signal in
            guard let self, signal.path.hasPrefix(prefix), signal.arguments.first?.string == "org.bluez.Device1",
                  let properties = signal.arguments.dropFirst().first?.dictionary else { return }
            var device = self.devices[signal.path] ?? BluetoothDevice(path: signal.path)
            device.apply(properties)
            device.invalidate(signal.arguments.dropFirst(2).first?.strings ?? [])
            self.devices[signal.path] = device
            changed(device, Set(properties.keys))
        })
        watchTokens.append(connection.onSignal(
            sender: Self.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"
        ) { [weak self] signal in
            guard let self, let path = signal.arguments.first?.string,
                  signal.arguments.dropFirst().first?.strings?.contains("org.bluez.Device1") == true else { return }
            self.devices[path] = nil
        })
    }

    private func adapterCall(_ adapterPath: String, _ member: String, _ arguments: [DBusValue] = [],
                             _ done: @escaping (Result<Void, DBusError>) -> Void) {
        connection.call(destination: Self.service, path: adapterPath, interface: "org.bluez.Adapter1", member: member,
                        arguments: arguments, timeout: .seconds(10)) { done($0.map { _ in () }) }
    }

    /// `SetDiscoveryFilter({Transport: …})`, then `StartDiscovery`: `transport` (empty or both: `auto`,
    /// bluetoothd's interleaved LE and BR/EDR discovery) as `discoveryFilter` spells it. A filter bluetoothd
    /// refuses leaves discovery unfiltered; `BluetoothTool.scan` filters what it reports itself.
    package func startDiscovery(adapterPath: String, transport: BluetoothTransports = [],
                                _ done: @escaping (Result<Void, DBusError>) -> Void) {
        adapterCall(adapterPath, "SetDiscoveryFilter", [Self.discoveryFilter(transport)]) { [weak self] _ in
            self?.adapterCall(adapterPath, "StartDiscovery", [], done)
        }
    }

    /// `SetDiscoveryFilter`'s argument (`a{sv}`) for `transport`: `{"Transport": "le"|"bredr"|"auto"}`.
    package static func discoveryFilter(_ transport: BluetoothTransports) -> DBusValue {
        let name = transport == .le ? "le" : transport == .bredr ? "bredr" : "auto"
        return .properties(["Transport": .string(name)])
    }

    package func stopDiscovery(adapterPath: String, _ done: @escaping (Result<Void, DBusError>) -> Void) {
        adapterCall(adapterPath, "StopDiscovery", [], done)
    }

    /// `Adapter1.RemoveDevice`: forgets the device and its pairing.
    package func removeDevice(_ device: BluetoothDevice, _ done: @escaping (Result<Void, DBusError>) -> Void) {
        adapterCall(device.adapterPath, "RemoveDevice", [.objectPath(device.path)], done)
    }

    /// Sets `Trusted` on a device.
    package func setTrusted(_ device: BluetoothDevice, _ trusted: Bool, _ done: @escaping (Result<Void, DBusError>) -> Void) {
        connection.setProperty(destination: Self.service, path: device.path, interface: "org.bluez.Device1",
                               name: "Trusted", value: .bool(trusted), reply: done)
    }

    /// Pairs with `device` through `Device1.Pair`, with carbridge's own `Agent1` registered for the
    /// time of the pairing (so the PIN comes from carbridge, not from a desktop agent); `events`
    /// tells what the agent answered.
    package func pair(
        _ device: BluetoothDevice, pin: String, timeout: Duration = .seconds(60),
        events: @escaping (PairingAgent.Event) -> Void, done: @escaping (Result<Void, DBusError>) -> Void
    ) {
        let agentPath = "/org/carbridge/agent\(getpid())"
        let agent = PairingAgent(pin: pin, devicePath: device.path)
        let token = connection.exportObject(path: agentPath) { call in
            guard call.interface == "org.bluez.Agent1" else { return .unhandled }
            let (reply, event) = agent.answer(member: call.member, arguments: call.arguments)
            if let event { events(event) }
            switch reply {
            case .values(let values): return .values(values)
            case .error(let error): return .error(error)
            case .unknownMethod: return .unhandled
            }
        }
        let manager = { (member: String, arguments: [DBusValue], next: @escaping (Result<[DBusValue], DBusError>) -> Void) in
            self.connection.call(destination: Self.service, path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                 member: member, arguments: arguments, timeout: .seconds(10), reply: next)
        }
        manager("RegisterAgent", [.objectPath(agentPath), .string("KeyboardDisplay")]) { [weak self] registered in
            guard let self else { return }
            if case .failure(let error) = registered {
                token.cancel()
                return done(.failure(error))
            }
            // Asynchronous on purpose: while Pair runs, bluetoothd calls our agent (RequestPinCode).
            self.connection.call(destination: Self.service, path: device.path, interface: "org.bluez.Device1",
                                 member: "Pair", timeout: timeout) { paired in
                manager("UnregisterAgent", [.objectPath(agentPath)]) { _ in
                    token.cancel()
                    done(paired.map { _ in () })
                }
            }
        }
    }
}

/// A one-shot use of BlueZ for the CLI commands and for resolving a link before `run` starts: a
/// private event loop, and calls that look synchronous because the loop spins until their reply
/// came (it is the loop doing the waiting, with the bus fd and timers on it).
package final class BlueZSession {
    package let loop: EventLoop
    package let client: BlueZClient

    /// Connects; a missing bus is a `BluetoothFailure` with `noBluetoothd` set.
    package init() throws(BluetoothFailure) {
        do {
            loop = try EventLoop()
        } catch {
            throw BluetoothFailure("cannot create an event loop: \(error)")
        }
        do {
            client = try BlueZClient(loop: loop)
        } catch {
            throw BluetoothFailure(noBus: error)
        }
    }

    deinit { client.close() }

    /// Spins the loop until `start`'s completion ran or `timeout` passed (nil then).
    package func wait<T>(timeout: Duration, _ start: (@escaping (T) -> Void) -> Void) -> T? {
        var result: T?
        start { result = $0 }
        let deadline = loop.now().advanced(by: timeout)
        while result == nil {
            let left = deadline.duration(since: loop.now())
            if left <= .zero { break }
            do {
                try loop.runOnce(timeout: left)
            } catch {
                break
            }
        }
        return result
    }

    /// Spins the loop for `duration` (signals and replies are handled meanwhile), or until `stop` says so.
    package func spin(for duration: Duration, until stop: () -> Bool = { false }) {
        let deadline = loop.now().advanced(by: duration)
        while !stop() {
            let left = deadline.duration(since: loop.now())
            if left <= .zero { break }
            try? loop.runOnce(timeout: min(left, .milliseconds(250)))
        }
    }

    /// A call made synchronous: its result, or a `BluetoothFailure` (no reply within `timeout`, or
    /// no bluetoothd on the bus: `noBluetoothd`).
    package func call<T>(_ what: String, timeout: Duration = .seconds(15),
                        _ start: (@escaping (Result<T, DBusError>) -> Void) -> Void) throws(BluetoothFailure) -> T {
        guard let result = wait(timeout: timeout, start) else {
            throw BluetoothFailure("bluetoothd did not answer \(what) within \(timeout.components.seconds) s")
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw BluetoothFailure(what, failed: error)
        }
    }

    /// Everything bluetoothd knows.
    package func objects() throws(BluetoothFailure) -> BlueZObjects {
        try call("GetManagedObjects") { client.managedObjects($0) }
    }
}

/// A Bluetooth operation that failed, as the sentence to print.
package struct BluetoothFailure: Error, CustomStringConvertible {
    package var description: String
    /// No D-Bus or no bluetoothd: `scan` falls back to the raw inquiry.
    package var noBluetoothd: Bool
    /// The D-Bus error behind it, if any.
    package var dbus: DBusError?

    package init(_ description: String, noBluetoothd: Bool = false, dbus: DBusError? = nil) {
        self.description = description
        self.noBluetoothd = noBluetoothd
        self.dbus = dbus
    }

    /// The sentence for the call `what` that failed with `error` (no bluetoothd on the bus: `noBluetoothd`).
    package init(_ what: String, failed error: DBusError) {
        if error.meansServiceMissing {
            self.init("bluetoothd is not running (nobody owns org.bluez on the system bus)", noBluetoothd: true)
        } else {
            self.init("\(what) failed: \(error)", dbus: error)
        }
    }

    /// The sentence for a bus that cannot be reached at all (`BlueZClient(loop:)` threw).
    package init(noBus error: DBusError) {
        self.init(error.message, noBluetoothd: true)
    }
}

/// The sentence for an adapter that cannot be used yet (off, rfkill-blocked), or nil.
package enum AdapterAdvice {
    /// Reads `/sys/class/bluetooth/NAME/rfkill*/{hard,soft}`: (hard, soft) blocked.
    package static func rfkill(_ name: String, sysfs: String = "/sys/class/bluetooth") -> (hard: Bool, soft: Bool) {
        let directory = "\(sysfs)/\(name)"
        var hard = false
        var soft = false
        for entry in BluetoothScanner.listDirectory(directory) where entry.hasPrefix("rfkill") {
            func flag(_ file: String) -> Bool {
                readAttribute("\(directory)/\(entry)/\(file)")?.trimming(while: \.isWhitespace) == "1"
            }
            hard = hard || flag("hard")
            soft = soft || flag("soft")
        }
        return (hard, soft)
    }

    /// A small sysfs attribute's text (its first 64 bytes: `0\n` or `1\n` here), or nil when it cannot be read.
    private static func readAttribute(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        var count = -1
        repeat {
            count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        guard count >= 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    package static func problem(_ adapter: BluetoothAdapter, rfkill blocked: (hard: Bool, soft: Bool)) -> String? {
        if adapter.powered { return nil }
        let name = adapter.name
        if blocked.hard {
            return "the Bluetooth adapter \(name) is blocked by a hardware switch (rfkill): switch the radio on (key or switch), then run `bluetoothctl power on`"
        }
        if blocked.soft || adapter.powerState == "off-blocked" {
            return "the Bluetooth adapter \(name) is blocked by rfkill: run `rfkill unblock bluetooth`, then `bluetoothctl power on`"
        }
        return "the Bluetooth adapter \(name) is off: run `bluetoothctl power on`"
            + (name == "hci0" ? "" : " (in bluetoothctl: `select \(adapter.address)` first)")
    }
}
