import DriveBluetooth
import DriveDBus
import DriveSystem
import Glibc

/// bluetoothd as a BLE link sees it, on a test's loop: an object tree (an adapter, the cars, their GATT
/// objects once connected), the methods the link calls, and the signals bluetoothd sends. Replies and
/// signals are delivered in order on the loop, as a bus connection delivers them. `AcquireNotify` and
/// `AcquireWrite` hand over real SEQPACKET socket pairs; the car's ends are `notifyPeer` and `writePeer`.
final class FakeBlueZ: DBusClient {
    struct Call {
        let path: String
        let interface: String
        let member: String
        let arguments: [DBusValue]
        let timeout: Duration
        let reply: (Result<[DBusValue], DBusError>) -> Void
    }

    /// A car bluetoothd can connect to.
    struct Car {
        var path: String
        var address: String
        var name: String
        var serviceUUID = "0000ffe0-0000-1000-8000-00805f9b34fb"
        var characteristics: [(uuid: String, flags: [String])] = [
            ("0000ffe1-0000-1000-8000-00805f9b34fb", ["read", "write-without-response", "write", "notify"])
        ]
        var mtu = 23
    }

    private final class Subscription: DBusSubscription {
        let path: String?
        let interface: String?
        let member: String?
        let handler: (DBusConnection.Signal) -> Void
        var cancelled = false
        init(path: String?, interface: String?, member: String?, handler: @escaping (DBusConnection.Signal) -> Void) {
            self.path = path
            self.interface = interface
            self.member = member
            self.handler = handler
        }
        func cancel() { cancelled = true }
    }

    let loop: EventLoop
    var isOpen = true
    var onClose: ((DBusError) -> Void)?
    /// Every call, in order: `Device1.Connect /org/bluez/hci0/dev_…`.
    private(set) var log: [String] = []
    /// The frames written with WriteValue (their bytes as text) and the write type of each.
    private(set) var written: [String] = []
    private(set) var writeTypes: [String] = []
    /// While true, WriteValue calls wait in `pendingWrites` until the test answers them.
    var holdWrites = false
    /// Called as each WriteValue arrives (after it is recorded in `written`).
    var onWriteValue: (() -> Void)?
    private(set) var pendingWrites: [Call] = []
    /// Members answered with an error instead.
    var refuse: [String: DBusError] = [:]
    /// Connect also makes the link's services resolve (Connected, GATT objects, ServicesResolved).
    var resolveOnConnect = true
    /// Shrinks the acquired write socket's buffers (the link's send, the car's receive), to fill it.
    var writeSocketBuffer: Int32?
    /// The car's ends of the acquired sockets (-1: none).
    private(set) var notifyPeer: Int32 = -1
    private(set) var writePeer: Int32 = -1
    private var subscriptions: [Subscription] = []
    private var objects: [String: [String: [String: DBusValue]]] = [:]
    private var cars: [String: Car] = [:]

    static let adapterPath = "/org/bluez/hci0"

    init(loop: EventLoop) {
        self.loop = loop
        objects[Self.adapterPath] = [
            "org.bluez.Adapter1": ["Address": .string("00:AA:01:00:00:23"), "Powered": .bool(true)]
        ]
    }

    deinit {
        if notifyPeer >= 0 { Glibc.close(notifyPeer) }
        if writePeer >= 0 { Glibc.close(writePeer) }
    }

    /// A car bluetoothd knows (discovered or paired); `announce` sends InterfacesAdded as discovery would.
    @discardableResult
    func addCar(address: String, name: String, announce: Bool = false, configure: (inout Car) -> Void = { _ in }) -> String {
        let path = Self.adapterPath + "/dev_" + address.split(separator: ":").joined(separator: "_")
        var car = Car(path: path, address: address, name: name)
        configure(&car)
        cars[path] = car
        let properties: [String: DBusValue] = [
            "Address": .string(address), "Name": .string(name), "Alias": .string(name), "Connected": .bool(false),
            "ServicesResolved": .bool(false), "Paired": .bool(false), "AddressType": .string("public"),
            "UUIDs": .array("s", [.string(car.serviceUUID)]),
        ]
        objects[path] = ["org.bluez.Device1": properties]
        if announce {
            emit(path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                 [.objectPath(path), .array("{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .properties(properties))])])
        }
        return path
    }

    /// The car's side of a disconnect (power off, out of range): Connected and ServicesResolved go false.
    func dropLink(_ path: String, order: [String] = ["ServicesResolved", "Connected"]) {
        for name in order {
            objects[path]?["org.bluez.Device1"]?[name] = .bool(false)
            changed(path, [name: .bool(false)])
        }
    }

    /// The car's GATT application went away (Service Changed): its objects are removed, the link stays up.
    func removeServices(of path: String) {
        for objectPath in objects.keys.sorted(by: >) where objectPath.hasPrefix(path + "/") {
            let interfaces = objects[objectPath]!.keys.sorted()
            objects[objectPath] = nil
            emit(path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
                 [.objectPath(objectPath), .array("s", interfaces.map { .string($0) })])
        }
    }

    /// A notification from the car through its AcquireNotify socket.
    func notify(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(notifyPeer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The car hangs up its notify socket (bluetoothd closes it when the link goes).
    func hangUpNotify() {
        Glibc.close(notifyPeer)
        notifyPeer = -1
    }

    /// Answers the oldest held WriteValue (success, or `error`).
    func answerWrite(_ error: DBusError? = nil) {
        guard !pendingWrites.isEmpty else { return }
        let call = pendingWrites.removeFirst()
        deliver { call.reply(error.map { .failure($0) } ?? .success([])) }
    }

    /// What the write socket received, one packet per write.
    func readWritePackets() -> [String] {
        var packets: [String] = []
        var buffer = [UInt8](repeating: 0, count: 600)
        while writePeer >= 0 {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(writePeer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count <= 0 { break }
            packets.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return packets
    }

    /// The bus connection fails.
    func failBus() {
        isOpen = false
        let handler = onClose
        onClose = nil
        deliver { handler?(DBusError(name: "carbridge.Error.Disconnected", message: "the D-Bus connection failed")) }
    }

    // MARK: DBusClient

    func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue],
        timeout: Duration, reply: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        let short = interface.split(separator: ".").last.map(String.init) ?? interface
        log.append("\(short).\(member) \(path)")
        let call = Call(path: path, interface: interface, member: member, arguments: arguments, timeout: timeout, reply: reply)
        if let error = refuse[member] { return deliver { reply(.failure(error)) } }
        switch member {
        case "GetManagedObjects":
            let value = managedObjects()
            deliver { reply(.success([value])) }
        case "Connect":
            deliver { reply(.success([])) }
            if resolveOnConnect { resolve(path) }
        case "Disconnect":
            deliver { reply(.success([])) }
            if objects[path]?["org.bluez.Device1"]?["Connected"] == .bool(true) { dropLink(path) }
        case "AcquireNotify", "AcquireWrite":
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                return deliver { reply(.failure(DBusError(name: "org.bluez.Error.Failed", message: "socketpair"))) }
            }
            if member == "AcquireNotify" { notifyPeer = fds[1] } else { writePeer = fds[1] }
            if member == "AcquireWrite", var size = writeSocketBuffer {
                setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, 4)
                setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &size, 4)
            }
            let mtu = cars.values.first { path.hasPrefix($0.path) }?.mtu ?? 23
            deliver {
                reply(.success([.unixFD(fds[0]), .uint16(UInt16(mtu))]))
                Glibc.close(fds[0])  // the message's copy: the link keeps its own dup
            }
        case "WriteValue":
            let bytes = arguments.first?.elements?.compactMap { value -> UInt8? in
                if case .byte(let b) = value { return b }
                return nil
            } ?? []
            written.append(String(decoding: bytes, as: UTF8.self))
            writeTypes.append(arguments.dropFirst().first?.dictionary?["type"]?.string ?? "")
            if holdWrites {
                pendingWrites.append(call)
            } else {
                deliver { reply(.success([])) }
            }
            onWriteValue?()
        default:
            deliver { reply(.success([])) }
        }
    }

    func subscribe(
        sender: String?, path: String?, interface: String?, member: String?,
        _ handler: @escaping (DBusConnection.Signal) -> Void
    ) -> any DBusSubscription {
        let subscription = Subscription(path: path, interface: interface, member: member, handler: handler)
        subscriptions.append(subscription)
        return subscription
    }

    func close() {
        isOpen = false
        log.append("close")
    }

    // MARK: helpers

    private func deliver(_ body: @escaping () -> Void) {
        loop.execute(body)
    }

    private func emit(path: String, interface: String, member: String, _ arguments: [DBusValue]) {
        let signal = DBusConnection.Signal(path: path, interface: interface, member: member, arguments: arguments)
        deliver { [subscriptions] in
            for subscription in subscriptions where !subscription.cancelled
                && (subscription.path == nil || subscription.path == path)
                && (subscription.interface == nil || subscription.interface == interface)
                && (subscription.member == nil || subscription.member == member) {
                subscription.handler(signal)
            }
        }
    }

    private func changed(_ path: String, _ properties: [String: DBusValue], interface: String = "org.bluez.Device1") {
        emit(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
             [.string(interface), .properties(properties), .array("s", [])])
    }

    /// Connected, the GATT objects (InterfacesAdded), then ServicesResolved, as bluetoothd does.
    private func resolve(_ path: String) {
        guard let car = cars[path] else { return }
        objects[path]?["org.bluez.Device1"]?["Connected"] = .bool(true)
        changed(path, ["Connected": .bool(true)])
        let service = path + "/service0010"
        objects[service] = ["org.bluez.GattService1": ["UUID": .string(car.serviceUUID), "Device": .objectPath(path), "Primary": .bool(true)]]
        for (index, characteristic) in car.characteristics.enumerated() {
            objects[service + "/char00\(11 + index * 3)"] = ["org.bluez.GattCharacteristic1": [
                "UUID": .string(characteristic.uuid), "Service": .objectPath(service),
                "Flags": .array("s", characteristic.flags.map { .string($0) }), "MTU": .uint16(UInt16(car.mtu)),
            ]]
        }
        objects[path]?["org.bluez.Device1"]?["ServicesResolved"] = .bool(true)
        changed(path, ["ServicesResolved": .bool(true)])
    }

    private func managedObjects() -> DBusValue {
        .array("{oa{sa{sv}}}", objects.keys.sorted().map { path in
            .dictEntry(.objectPath(path), .array("{sa{sv}}", objects[path]!.keys.sorted().map { interface in
                .dictEntry(.string(interface), .properties(objects[path]![interface]!))
            }))
        })
    }
}
