import CSDBus
import DriveCore
import DriveSystem
import Glibc

/// A D-Bus connection (sd-bus) driven by an `EventLoop`: no thread of its own and no blocking call.
///
/// The bus fd is watched for what `sd_bus_get_events` asks, and a loop timer is armed at
/// `sd_bus_get_timeout` (method-call timeouts, the connection's own); whenever either fires, or after
/// anything was queued, `sd_bus_process` runs until it has nothing left. Method calls are
/// asynchronous (`sd_bus_call_async`), so a call that makes the other side call back into us (BlueZ's
/// `Device1.Pair` asks our `Agent1` for the PIN) works: the loop keeps dispatching meanwhile.
/// Signal matches are added asynchronously too. Loop thread only; not `Sendable`.
package final class DBusConnection {
    /// Which bus.
    package enum Bus: Sendable {
        case system
        /// A bus address (`unix:path=/run/dbus/system_bus_socket`), for tests.
        case address(String)
    }

    private var bus: OpaquePointer?
    private let loop: EventLoop
    private let fd: Int32
    private var timer: EventLoop.TimerID?
    private var timerDeadline: UInt64 = .max
    /// What the bus fd is watched for now (nil: as `watch` set it up).
    private var watchedEvents: IOEvents? = .readable
    private var processScheduled = false
    private var slots: [ObjectIdentifier: Registration] = [:]
    /// Called once when the connection fails or is closed by the other side.
    package var onClose: ((DBusError) -> Void)?
    /// True until the connection failed or `close()` was called.
    package private(set) var isOpen = true

    /// Connects to `bus` (the connection completes on the loop; calls made meanwhile are queued).
    /// Throws a `DBusError` named `carbridge.Error.NoBus` when there is no such bus at all, or no libsystemd.
    package init(loop: EventLoop, bus which: Bus = .system) throws(DBusError) {
        self.loop = loop
        if let reason = carbridge_sd_bus_load_error() {
            // sd-bus is libsystemd's, loaded on first use (CSDBus): say why it is not there.
            throw DBusError(
                name: "carbridge.Error.NoBus",
                message: "cannot talk D-Bus without libsystemd (\(String(cString: reason))); install libsystemd0")
        }
        var opened: OpaquePointer?
        var rc: Int32
        switch which {
        case .system:
            rc = sd_bus_open_system(&opened)
        case .address(let address):
            rc = sd_bus_new(&opened)
            if rc >= 0 { rc = address.withCString { sd_bus_set_address(opened, $0) } }
            if rc >= 0 { rc = sd_bus_set_bus_client(opened, 1) }
            if rc >= 0 { rc = sd_bus_start(opened) }
        }
        if rc < 0 {
            sd_bus_unref(opened)
            throw DBusError(name: "carbridge.Error.NoBus", message: "cannot connect to the D-Bus system bus (\(String(cString: strerrorText(rc))))")
        }
        bus = opened
        fd = sd_bus_get_fd(opened)
        if fd < 0 {
            sd_bus_unref(opened)
            bus = nil
            throw DBusError(name: "carbridge.Error.NoBus", message: "the D-Bus connection has no fd")
        }
        do {
            try loop.watch(fd, for: .readable) { [weak self] _ in self?.process() }
        } catch {
            sd_bus_unref(opened)
            bus = nil
            throw DBusError(name: "carbridge.Error.NoBus", message: "cannot watch the D-Bus fd: \(error)")
        }
        scheduleProcess()
    }

    deinit {
        if bus != nil { shutDown() }
    }

    /// Leaves the bus: flushes what was queued (without waiting for anything) and frees everything.
    package func close() {
        guard bus != nil else { return }
        shutDown()
    }

    private func shutDown() {
        isOpen = false
        loop.unwatch(fd)
        if let timer { loop.cancel(timer) }
        timer = nil
        for registration in slots.values { registration.release() }
        slots.removeAll()
        if let bus {
            // Non-blocking flush attempt of anything still queued (e.g. UnregisterAgent), then close.
            _ = sd_bus_process(bus, nil)
            sd_bus_close(bus)
            sd_bus_unref(bus)
        }
        bus = nil
    }

    // MARK: the loop side

    private func scheduleProcess() {
        guard !processScheduled else { return }
        processScheduled = true
        loop.execute { [weak self] in
            guard let self else { return }
            self.processScheduled = false
            self.process()
        }
    }

    /// Runs `sd_bus_process` until it has nothing left, then re-arms the fd watch and the timer.
    private func process() {
        guard let bus else { return }
        while true {
            let rc = sd_bus_process(bus, nil)
            if self.bus == nil { return }  // a callback closed the connection
            if rc < 0 {
                fail(DBusError(name: "carbridge.Error.Disconnected", message: "the D-Bus connection failed (\(String(cString: strerrorText(rc))))"))
                return
            }
            if rc == 0 { break }
        }
        rearm()
    }

    private func rearm() {
        guard let bus else { return }
        let events = sd_bus_get_events(bus)
        if events < 0 {
            fail(DBusError(name: "carbridge.Error.Disconnected", message: "the D-Bus connection was closed"))
            return
        }
        var wanted: IOEvents = []
        if events & Int32(POLLIN) != 0 { wanted.insert(.readable) }
        if events & Int32(POLLOUT) != 0 { wanted.insert(.writable) }
        // Only a change reaches epoll: after a call or a reply the set is almost always the same.
        if wanted != watchedEvents {
            try? loop.change(fd, to: wanted)
            watchedEvents = wanted
        }
        var usec: UInt64 = .max
        _ = sd_bus_get_timeout(bus, &usec)
        // Every call moves sd-bus's next timeout (its reply deadline); a timer already due no later is kept: when
        // it fires, `process` runs and this re-arms at the deadline then current. So a stream of calls does not
        // re-arm the loop's timer for each one.
        if usec < timerDeadline || (timer == nil && usec != .max) {
            if let timer { loop.cancel(timer) }
            timer = nil
            timerDeadline = usec
            if usec != .max {
                let deadline = Instant(nanoseconds: Int64(clamping: usec.multipliedReportingOverflow(by: 1000).partialValue))
                timer = loop.schedule(at: loop.instant(forMonotonic: deadline)) { [weak self] in
                    guard let self else { return }
                    self.timer = nil
                    self.timerDeadline = .max
                    self.process()
                }
            }
        }
    }

    private func fail(_ error: DBusError) {
        let handler = onClose
        onClose = nil
        shutDown()
        handler?(error)
    }

    // MARK: calls

    /// Calls `member` asynchronously; `reply` runs on the loop with the reply's values or the error
    /// (also a local one, or `org.freedesktop.DBus.Error.NoReply` after `timeout`).
    package func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25), reply: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        guard let bus else {
            reply(.failure(DBusError(name: "carbridge.Error.Disconnected", message: "the D-Bus connection is closed")))
            return
        }
        var message: OpaquePointer?
        var rc = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        defer { sd_bus_message_unref(message) }
        if rc >= 0 {
            do {
                for argument in arguments { try DBusCodec.append(argument, to: message) }
            } catch {
                reply(.failure(error))
                return
            }
        }
        let box = Registration(kind: .reply(reply))
        if rc >= 0 {
            let usec = UInt64(max(1, timeout.nanoseconds / 1000))
            rc = sd_bus_call_async(bus, nil, message, dbusReplyTrampoline, box.retained(), usec)
            if rc < 0 { box.releaseRetained() }
        }
        if rc < 0 {
            reply(.failure(DBusError(call: "\(interface).\(member)", errno: rc)))
            return
        }
        scheduleProcess()
    }

    /// `org.freedesktop.DBus.Properties.Get`.
    package func getProperty(
        destination: String, path: String, interface: String, name: String,
        reply: @escaping (Result<DBusValue, DBusError>) -> Void
    ) {
        call(destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
             arguments: [.string(interface), .string(name)]) { result in
            reply(result.flatMap { values in
                guard let first = values.first else {
                    return .failure(DBusError(name: "carbridge.Error.BadReply", message: "Properties.Get returned nothing"))
                }
                return .success(first.unwrapped)
            })
        }
    }

    /// `org.freedesktop.DBus.Properties.Set`.
    package func setProperty(
        destination: String, path: String, interface: String, name: String, value: DBusValue,
        reply: @escaping (Result<Void, DBusError>) -> Void
    ) {
        call(destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
             arguments: [.string(interface), .string(name), .variant(value)]) { result in
            reply(result.map { _ in () })
        }
    }

    // MARK: signals

    /// A signal: its object path, member and values.
    package struct Signal {
        package var path: String
        package var interface: String
        package var member: String
        package var arguments: [DBusValue]

        /// A signal with these parts (a test's fake bus makes them).
        package init(path: String, interface: String, member: String, arguments: [DBusValue]) {
            self.path = path
            self.interface = interface
            self.member = member
            self.arguments = arguments
        }
    }

    /// Handle of a match or an exported object; `cancel()` removes it (so does closing the connection).
    package final class Token {
        fileprivate weak var connection: DBusConnection?
        fileprivate let key: ObjectIdentifier
        fileprivate init(connection: DBusConnection, key: ObjectIdentifier) {
            self.connection = connection
            self.key = key
        }
        package func cancel() {
            guard let connection, let registration = connection.slots.removeValue(forKey: key) else { return }
            registration.release()
        }
    }

    /// Subscribes to signals (nil = any) from `sender`; the match is installed asynchronously.
    @discardableResult
    package func onSignal(
        sender: String?, path: String? = nil, interface: String?, member: String?, _ handler: @escaping (Signal) -> Void
    ) -> Token {
        let registration = Registration(kind: .signal(handler))
        let token = Token(connection: self, key: ObjectIdentifier(registration))
        guard let bus else { return token }
        var slot: OpaquePointer?
        let rc = sd_bus_match_signal_async(
            bus, &slot, sender, path, interface, member, dbusSignalTrampoline, nil, Unmanaged.passUnretained(registration).toOpaque())
        if rc >= 0 {
            registration.slot = slot
            slots[token.key] = registration
            scheduleProcess()
        }
        return token
    }

    // MARK: exported objects

    /// An incoming method call to an exported object.
    package struct MethodCall {
        package var path: String
        package var interface: String
        package var member: String
        package var arguments: [DBusValue]
        package var sender: String
    }

    /// What an exported method answers.
    package enum MethodReply {
        case values([DBusValue])
        case error(DBusError)
        /// Not ours: sd-bus answers `UnknownMethod`.
        case unhandled
    }

    /// Exports an object at `path`: every method call to it goes to `handler`, which answers at once.
    @discardableResult
    package func exportObject(path: String, _ handler: @escaping (MethodCall) -> MethodReply) -> Token {
        let registration = Registration(kind: .object(handler))
        registration.connection = self
        let token = Token(connection: self, key: ObjectIdentifier(registration))
        guard let bus else { return token }
        var slot: OpaquePointer?
        let rc = sd_bus_add_object(bus, &slot, path, dbusObjectTrampoline, Unmanaged.passUnretained(registration).toOpaque())
        if rc >= 0 {
            registration.slot = slot
            slots[token.key] = registration
        }
        return token
    }

    fileprivate func answer(_ call: OpaquePointer?, with reply: MethodReply) -> Int32 {
        guard let bus else { return 0 }
        switch reply {
        case .unhandled:
            return 0
        case .values(let values):
            var message: OpaquePointer?
            var rc = sd_bus_message_new_method_return(call, &message)
            defer { sd_bus_message_unref(message) }
            if rc >= 0 {
                do {
                    for value in values { try DBusCodec.append(value, to: message) }
                } catch {
                    return -EINVAL
                }
                rc = sd_bus_send(bus, message, nil)
            }
            scheduleProcess()
            return rc < 0 ? rc : 1
        case .error(let error):
            let rc = error.name.withCString { name in
                error.message.withCString { text in
                    var raw = sd_bus_error(name: name, message: text, _need_free: 0)
                    return sd_bus_reply_method_error(call, &raw)
                }
            }
            scheduleProcess()
            return rc < 0 ? rc : 1
        }
    }
}

/// What a callback registration holds (kept alive by the connection or by the pending call).
final class Registration {
    enum Kind {
        case reply((Result<[DBusValue], DBusError>) -> Void)
        case signal((DBusConnection.Signal) -> Void)
        case object((DBusConnection.MethodCall) -> DBusConnection.MethodReply)
    }
    let kind: Kind
    var slot: OpaquePointer?
    weak var connection: DBusConnection?

    init(kind: Kind) { self.kind = kind }

    func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
    func releaseRetained() { Unmanaged.passUnretained(self).release() }

    /// Drops the sd-bus slot (removes the match or the object).
    func release() {
        if let slot { sd_bus_slot_unref(slot) }
        slot = nil
    }
}

private func dbusReplyTrampoline(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let userdata else { return 0 }
    let registration = Unmanaged<Registration>.fromOpaque(userdata).takeRetainedValue()
    guard case .reply(let reply) = registration.kind else { return 0 }
    if let failure = sd_bus_message_get_error(message) {
        let name = failure.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let text = failure.pointee.message.map { String(cString: $0) } ?? ""
        reply(.failure(DBusError(name: name, message: text)))
        return 0
    }
    do {
        reply(.success(try DBusCodec.readAll(message)))
    } catch {
        reply(.failure(error))
    }
    return 0
}

private func dbusSignalTrampoline(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let userdata else { return 0 }
    let registration = Unmanaged<Registration>.fromOpaque(userdata).takeUnretainedValue()
    guard case .signal(let handler) = registration.kind, let values = try? DBusCodec.readAll(message) else { return 0 }
    handler(DBusConnection.Signal(
        path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "",
        interface: sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "",
        member: sd_bus_message_get_member(message).map { String(cString: $0) } ?? "",
        arguments: values))
    return 0
}

private func dbusObjectTrampoline(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let userdata else { return 0 }
    let registration = Unmanaged<Registration>.fromOpaque(userdata).takeUnretainedValue()
    guard case .object(let handler) = registration.kind else { return 0 }
    var type: UInt8 = 0
    _ = sd_bus_message_get_type(message, &type)
    guard type == UInt8(SD_BUS_MESSAGE_METHOD_CALL) else { return 0 }
    let call = DBusConnection.MethodCall(
        path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "",
        interface: sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "",
        member: sd_bus_message_get_member(message).map { String(cString: $0) } ?? "",
        arguments: (try? DBusCodec.readAll(message)) ?? [],
        sender: sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "")
    let reply = handler(call)
    guard let connection = registration.connection else { return 0 }
    return connection.answer(message, with: reply)
}

