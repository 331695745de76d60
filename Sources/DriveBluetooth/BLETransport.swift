import CLinux
import DriveCore
import DriveDBus
import DriveLink
import DriveSystem
import Glibc

/// A Bluetooth Low Energy "serial" car (HM-10 and kin, Nordic UART, Microchip transparent UART) through
/// bluetoothd's GATT client, as a `LinkTransport`: on the caller's event loop and its own sd-bus
/// connection, no thread, no blocking call. The `LinkSupervisor` above it times the attempts, backs off,
/// flushes and shuts down, as for every other link.
///
/// **Connecting** (every attempt, bounded by the supervisor's connect timeout): the car is looked up among bluetoothd's
/// devices by address or name (two of that name are refused, with their addresses); when it is not known,
/// LE discovery runs until it advertises. Then `Device1.Connect`, `ServicesResolved`, the UART profile
/// recognised from its services (`GATTDatabase`), the car's lines through `AcquireNotify` (or
/// `StartNotify`), and the link is up: the bridge's handshake is the first frame.
///
/// **Writing** (`BLEWriteMode`): one frame per ATT write, never more than MTU − 3 bytes (a longer frame is
/// cut into pieces of that size; bluetoothd drops an over-long write silently). Where the characteristic
/// allows write requests, each frame is acknowledged by the car before the next leaves, so no frame is ever
/// overtaken by an older one, even across the several ATT bearers (EATT) bluetoothd opens by default; while
/// one is unacknowledged, newer motion frames coalesce (newest wins), so at most one motion frame is ever
/// below carbridge. A write not acknowledged within `stallTimeout` is a stall (protocol §6): the car is
/// disconnected, so nothing queued in bluetoothd arrives later. Write commands through `AcquireWrite` have
/// the same rule: a socket that takes nothing (EAGAIN) for `stallTimeout` while a frame waits is a stall.
///
/// **Loss**: `Connected` or `ServicesResolved` going false, the characteristic or device object removed,
/// a hang-up of the notify or write socket, a failed write, or the bus closing, whichever comes first;
/// the sockets are closed (and the car disconnected after a stall or a failed write), then the loss is
/// reported.
package final class BLETransport: LinkTransport {
    /// Which car.
    package enum Target: Hashable, Sendable, CustomStringConvertible {
        /// By address (upper-case).
        case address(String)
        /// By the name it advertises (or an alias set in bluetoothd).
        case name(String)

        package var description: String {
            switch self {
            case .address(let address): return address
            case .name(let name): return name
            }
        }
    }

    /// Makes the bus connection (the system bus; a fake in tests).
    package typealias BusMaker = () throws -> any DBusClient

    /// The car looked for.
    package let target: Target
    /// `ble://HMSoft`.
    package let name: String
    /// Where the transport reports.
    package var onEvent: ((TransportEvent) -> Void)?
    /// Connect timeout (for the D-Bus calls of an attempt), stall timeout, a configured UART profile.
    package var options: LinkOptions
    /// The least time between two motion frames when writes are not acknowledged (`BLEWriteMode.acquired`,
    /// `.command`): carbridge cannot see bluetoothd's queue then, so it never offers frames faster than an
    /// LE link at its longest usual connection interval carries a few of them.
    package var commandPacing: Duration = .milliseconds(20)
    /// How many ATT writes were completed (acknowledged, or handed to bluetoothd for write commands).
    package private(set) var writesCompleted = 0
    /// The UART profile of the current connection.
    package private(set) var endpoints: BLEUARTEndpoints?
    /// How the current connection writes.
    package private(set) var writeMode: BLEWriteMode?

    private let loop: EventLoop
    private let makeBus: BusMaker
    private var bus: (any DBusClient)?
    private var subscriptions: [any DBusSubscription] = []
    private var phase: BLETransportPhase = .none
    /// Counts attempts and connections: a reply or signal of an older one is ignored.
    private var generation = 0
    /// The supervisor's number for the attempt under way.
    private var attempt = 0
    private var paceTimer: EventLoop.TimerID?
    /// While the acquired write socket refuses a waiting frame (EAGAIN): when that becomes a stall.
    private var socketStallTimer: EventLoop.TimerID?
    /// What bluetoothd told of its devices (GetManagedObjects, InterfacesAdded, PropertiesChanged).
    private var devices: [String: BluetoothDevice] = [:]
    /// Device paths whose `ServicesResolved` is true.
    private var resolved: Set<String> = []
    /// The adapter discovery runs on, while it runs.
    private var discoveryAdapter: String?
    /// The device of the current attempt or connection, and how it is called in sentences.
    private var devicePath: String?
    private var carLabel: String
    private var notifyFD: Int32 = -1
    private var notifyByProperty = false
    private var writeInFlight = 0
    private var lastMotionWrite: Instant?
    /// When the write request in flight was made.
    private var writeStartedAt: Instant?
    /// When the last motion frame came, and the gap before it: the stream's period as the link sees it.
    private var lastMotionSend: Instant?
    private var motionGap: Duration?
    /// Writes in a row answered after more than that gap, this connection; whether that was said.
    private var slowWritesInARow = 0
    private var paceNoticeGiven = false
    private var queue: FrameQueue
    private var assembler = LineAssembler()
    private var readBuffer = [UInt8](repeating: 0, count: 1024)
    private var drainWatch = LinkSupervisor.DrainWatch.off

    /// A transport to `target` (nothing happens until `open(attempt:)`); `bus` makes its D-Bus connection.
    package init(
        target: Target, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions(),
        bus: BusMaker? = nil
    ) {
        self.target = target
        switch target {
        case .address(let address): name = "ble://\(address)"
        case .name(let device): name = "ble://\(LinkURL.encodeDeviceName(device))"
        }
        carLabel = target.description
        self.loop = loop
        self.options = options
        self.queue = FrameQueue(encoder: encoder)
        self.makeBus = bus ?? { try DBusConnection(loop: loop, bus: .system) }
    }

    /// Tells the driver `text` (a run event, through the supervised link and the bridge).
    private func say(_ text: String) {
        onEvent?(.notice(text))
    }

    deinit {
        for timer in [paceTimer, socketStallTimer].compactMap({ $0 }) { loop.cancel(timer) }
        closeSockets()
        for subscription in subscriptions { subscription.cancel() }
        bus?.close()
    }

    // MARK: LinkTransport

    /// Starts attempt `attempt`: finds the car, connects, opens its UART.
    package func open(attempt: Int) {
        self.attempt = attempt
        beginAttempt()
    }

    /// The attempt took longer than `timeout`: gives it up (disconnecting a half-made connection) and says
    /// which step did not finish.
    package func abandonAttempt(after timeout: Duration) -> String {
        let seconds = SocketSupport.secondsText(timeout)
        let reason: String
        let disconnect: Bool
        switch phase {
        case .connecting:
            reason = "\(carLabel) did not accept the connection within \(seconds) s: check that it is switched on and in range"
            disconnect = true
        case .opening:
            reason = "\(carLabel) connected but its services did not come within \(seconds) s"
            disconnect = true
        case .none, .searching, .up:
            reason = "no Bluetooth LE car \(target.description.quotedIfName(target)) found within \(seconds) s: check that it is switched on, in range and not connected to another phone"
            disconnect = false
        }
        tearDown(disconnect: disconnect)
        return reason
    }

    /// True when nothing queued is unacknowledged (write requests) or not handed to bluetoothd (write commands).
    package func isDrained() -> Bool { !queue.hasPendingBytes && writeInFlight == 0 }

    /// While a drain is watched, each completed write is reported.
    package func watchDrain(_ watch: LinkSupervisor.DrainWatch) { drainWatch = watch }

    /// Drops the radio link (a car left connected would not advertise to anyone else), closes the sockets
    /// and the bus, then calls `done`.
    package func close(result: FlushResult, then done: @escaping () -> Void) {
        let bus = self.bus
        let wantsDisconnect = phase.hasDevice && devicePath != nil && bus?.isOpen == true
        let devicePath = self.devicePath
        tearDown(disconnect: false)
        let finish: () -> Void = { [weak self] in
            guard let self else { return done() }
            for subscription in self.subscriptions { subscription.cancel() }
            self.subscriptions.removeAll()
            self.bus?.close()
            self.bus = nil
            done()
        }
        guard wantsDisconnect, let bus, let devicePath else { return finish() }
        // Wait a little for bluetoothd to take the Disconnect (it acts on it even when we are gone).
        var finished = false
        let guardTimer = loop.schedule(after: .milliseconds(300)) {
            if !finished { finished = true; finish() }
        }
        Self.disconnect(devicePath, on: bus, within: .seconds(1)) { [loop] in
            guard !finished else { return }
            finished = true
            loop.cancel(guardTimer)
            // Not from inside the connection's own dispatch.
            loop.execute { finish() }
        }
    }

    /// Queues `frame` (newest motion frame wins, E/F kept in order); dropped while not up.
    package func send(_ frame: Frame) {
        guard case .up = phase else { return }
        if frame.isMotion {
            let now = loop.now()
            if let last = lastMotionSend { motionGap = now.duration(since: last) }
            lastMotionSend = now
        }
        queue.push(frame)
        pump()
    }

    /// A write request was answered after `roundTrip`. When that is longer than the gap between the motion
    /// frames the bridge sends, for `slowWritesBeforeNotice` writes in a row, the stream cannot keep its
    /// period: a request and its answer take at least two connection events, 60–100 ms at the usual 30–50 ms
    /// connection interval, against the 50 ms stream. Nothing queues (a newer motion frame replaces the
    /// waiting one, so the car gets the newest each time); the driver is told once per connection, with the
    /// pace measured, since a stop can then take that long to arrive. One slow write (a fade) says nothing.
    private func writeAnswered(after roundTrip: Duration) {
        guard let motionGap, roundTrip > motionGap else {
            slowWritesInARow = 0
            return
        }
        slowWritesInARow += 1
        guard !paceNoticeGiven, slowWritesInARow >= Self.slowWritesBeforeNotice else { return }
        paceNoticeGiven = true
        say("\(carLabel) takes a frame every \(Int(roundTrip.milliseconds.rounded())) ms, slower than the \(Int(motionGap.milliseconds.rounded())) ms stream: it gets the newest frame each time (older motion frames are dropped, nothing queues), so a stop can take that long to arrive")
    }

    /// How many slow writes in a row make the pace notice.
    static let slowWritesBeforeNotice = 10

    // MARK: connecting

    private func beginAttempt() {
        generation += 1
        devicePath = nil
        endpoints = nil
        writeMode = nil
        phase = .searching
        let attempt = generation
        guard let bus = openBus() else { return }
        bus.call(
            destination: BlueZNames.service, path: "/", interface: BlueZNames.objectManager, member: "GetManagedObjects",
            arguments: [], timeout: options.connectTimeout
        ) { [weak self] result in
            guard let self, attempt == self.generation, case .searching = self.phase else { return }
            switch result {
            case .failure(let error):
                self.attemptFailed(BLESentences.busFailure(error, doing: "list bluetoothd's devices"), disconnect: false)
            case .success(let reply):
                self.learn(managedObjects: reply)
                self.pickDevice(reply: reply, attempt: attempt)
            }
        }
    }

    /// The bus connection, made (and subscribed to bluetoothd's signals) when there is none.
    private func openBus() -> (any DBusClient)? {
        if let bus, bus.isOpen { return bus }
        for subscription in subscriptions { subscription.cancel() }
        subscriptions.removeAll()
        bus = nil
        let made: any DBusClient
        do {
            made = try makeBus()
        } catch {
            attemptFailed("cannot reach bluetoothd: \((error as? DBusError)?.message ?? "\(error)")", disconnect: false)
            return nil
        }
        bus = made
        made.onClose = { [weak self] error in self?.busClosed(error) }
        subscriptions.append(made.subscribe(
            sender: BlueZNames.service, path: nil, interface: BlueZNames.objectManager, member: "InterfacesAdded"
        ) { [weak self] signal in self?.interfacesAdded(signal) })
        subscriptions.append(made.subscribe(
            sender: BlueZNames.service, path: nil, interface: BlueZNames.objectManager, member: "InterfacesRemoved"
        ) { [weak self] signal in self?.interfacesRemoved(signal) })
        subscriptions.append(made.subscribe(
            sender: BlueZNames.service, path: nil, interface: BlueZNames.properties, member: "PropertiesChanged"
        ) { [weak self] signal in self?.propertiesChanged(signal) })
        return made
    }

    private func learn(managedObjects reply: [DBusValue]) {
        devices.removeAll()
        resolved.removeAll()
        guard let objects = reply.first?.dictionary else { return }
        for (path, value) in objects {
            guard let properties = value.dictionary?[BlueZNames.device]?.dictionary else { continue }
            var device = BluetoothDevice(path: path)
            device.apply(properties)
            devices[path] = device
            if properties["ServicesResolved"]?.bool == true { resolved.insert(path) }
        }
    }

    /// The car among the known devices: connect to it, or discover when it is not known.
    private func pickDevice(reply: [DBusValue], attempt: Int) {
        switch match() {
        case .one(let device):
            connect(device, attempt: attempt)
        case .several(let candidates):
            attemptFailed(DeviceResolver.ambiguousSentence(
                target.description, candidates: candidates, use: "use ble://ADDRESS instead"), disconnect: false)
        case .none:
            let objects = BlueZObjects(managedObjects: reply)
            guard let adapter = objects.adapters.first(where: \.powered) ?? objects.adapters.first else {
                return attemptFailed("bluetoothd has no Bluetooth adapter: plug one in or load its driver", disconnect: false)
            }
            if let problem = AdapterAdvice.problem(adapter, rfkill: AdapterAdvice.rfkill(adapter.name)) {
                return attemptFailed(problem, disconnect: false)
            }
            startDiscovery(on: adapter.path, attempt: attempt)
        }
    }

    private func match() -> DeviceResolver.Match {
        let known = devices.values.sorted { $0.path < $1.path }
        switch target {
        case .address(let address):
            let hits = known.filter { $0.address == address }
            // The same car seen by two adapters: the one already connected, else the first.
            if let connected = hits.first(where: \.connected) { return .one(connected) }
            return hits.first.map { .one($0) } ?? .none
        case .name(let name):
            return DeviceResolver.resolve(name, among: known, preferPaired: true)
        }
    }

    private func startDiscovery(on adapterPath: String, attempt: Int) {
        guard let bus else { return }
        discoveryAdapter = adapterPath
        let filter = DBusValue.properties(["Transport": .string("le")])
        bus.call(
            destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "SetDiscoveryFilter",
            arguments: [filter], timeout: options.connectTimeout
        ) { _ in }  // an older bluetoothd without the filter still discovers LE devices
        bus.call(
            destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StartDiscovery",
            arguments: [], timeout: options.connectTimeout
        ) { [weak self] result in
            guard let self, attempt == self.generation, case .searching = self.phase else { return }
            if case .failure(let error) = result, error.name != "org.bluez.Error.InProgress" {
                self.discoveryAdapter = nil
                self.attemptFailed(BLESentences.busFailure(error, doing: "start LE discovery"), disconnect: false)
            }
        }
    }

    private func stopDiscovery() {
        guard let adapter = discoveryAdapter, let bus else { return }
        discoveryAdapter = nil
        bus.call(
            destination: BlueZNames.service, path: adapter, interface: BlueZNames.adapter, member: "StopDiscovery",
            arguments: [], timeout: .seconds(5)
        ) { _ in }
    }

    private func connect(_ device: BluetoothDevice, attempt: Int) {
        stopDiscovery()
        devicePath = device.path
        carLabel = device.label
        phase = .connecting
        if device.connected && resolved.contains(device.path) {
            return readGATT(attempt: attempt)
        }
        bus?.call(
            destination: BlueZNames.service, path: device.path, interface: BlueZNames.device, member: "Connect",
            arguments: [], timeout: options.connectTimeout
        ) { [weak self] result in
            guard let self, attempt == self.generation, case .connecting = self.phase else { return }
            if case .failure(let error) = result, error.name != "org.bluez.Error.AlreadyConnected" {
                return self.attemptFailed(
                    BLESentences.busFailure(error, doing: "connect to \(self.carLabel)"), disconnect: true)
            }
            if self.resolved.contains(device.path) { self.readGATT(attempt: attempt) }
            // Otherwise ServicesResolved = true comes as a PropertiesChanged (propertiesChanged).
        }
    }

    private func readGATT(attempt: Int) {
        phase = .opening
        bus?.call(
            destination: BlueZNames.service, path: "/", interface: BlueZNames.objectManager, member: "GetManagedObjects",
            arguments: [], timeout: options.connectTimeout
        ) { [weak self] result in
            guard let self, attempt == self.generation, case .opening = self.phase, let path = self.devicePath else { return }
            switch result {
            case .failure(let error):
                self.attemptFailed(BLESentences.busFailure(error, doing: "read \(self.carLabel)'s services"), disconnect: true)
            case .success(let reply):
                switch GATTDatabase(managedObjects: reply, devicePath: path).uartEndpoints(
                    profile: self.options.bleProfile, car: self.carLabel)
                {
                case .failure(let failure):
                    self.attemptFailed(failure.sentence, disconnect: true)
                case .success(let found):
                    self.endpoints = found
                    self.openNotifications(found, attempt: attempt)
                }
            }
        }
    }

    private func openNotifications(_ found: BLEUARTEndpoints, attempt: Int) {
        guard let notify = found.notify else {
            say("\(carLabel): its \(found.profile.name) characteristic does not notify: the car's lines will not be shown")
            return openWriter(found, attempt: attempt)
        }
        bus?.call(
            destination: BlueZNames.service, path: notify.path, interface: BlueZNames.characteristic, member: "AcquireNotify",
            arguments: [.properties([:])], timeout: options.connectTimeout
        ) { [weak self] result in
            guard let self, attempt == self.generation, case .opening = self.phase else { return }
            if case .success(let values) = result,
               let own = self.adopt(values.first, { [weak self] events in self?.notifyReadable(events) }) {
                self.notifyFD = own
                return self.openWriter(found, attempt: attempt)
            }
            // AcquireNotify refused (an indicate-only characteristic, an older bluetoothd): StartNotify, and the
            // values come as PropertiesChanged of the characteristic.
            self.bus?.call(
                destination: BlueZNames.service, path: notify.path, interface: BlueZNames.characteristic,
                member: "StartNotify", arguments: [], timeout: self.options.connectTimeout
            ) { [weak self] result in
                guard let self, attempt == self.generation, case .opening = self.phase else { return }
                if case .failure(let error) = result {
                    self.say("\(self.carLabel): notifications refused (\(error.message)): the car's lines will not be shown")
                } else {
                    self.notifyByProperty = true
                }
                self.openWriter(found, attempt: attempt)
            }
        }
    }

    private func openWriter(_ found: BLEUARTEndpoints, attempt: Int) {
        if found.write.canWriteWithResponse {
            return linkUp(.request)
        }
        bus?.call(
            destination: BlueZNames.service, path: found.write.path, interface: BlueZNames.characteristic,
            member: "AcquireWrite", arguments: [.properties([:])], timeout: options.connectTimeout
        ) { [weak self] result in
            guard let self, attempt == self.generation, case .opening = self.phase else { return }
            // Readable here means hung up: bluetoothd never sends on the write socket.
            if case .success(let values) = result,
               let own = self.adopt(values.first, { [weak self] events in self?.writerEvent(events) }) {
                if let mtu = values.dropFirst().first?.integer, var write = self.endpoints?.write {
                    write.mtu = mtu
                    self.endpoints?.write = write
                }
                return self.linkUp(.acquired(fd: own))
            }
            self.linkUp(.command)
        }
    }

    /// The link's own copy of a socket bluetoothd handed over (the reply's fd closes with the reply),
    /// non-blocking and watched for readable; nil when `value` is no fd or it cannot be kept.
    private func adopt(_ value: DBusValue?, _ handler: @escaping (IOEvents) -> Void) -> Int32? {
        guard case .unixFD(let fd)? = value else { return nil }
        let own = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard own >= 0 else { return nil }
        _ = try? Syscall.setNonBlocking(own)
        do {
            try loop.watch(own, for: .readable, handler)
            return own
        } catch {
            Syscall.close(own)
            return nil
        }
    }

    private func linkUp(_ mode: BLEWriteMode) {
        writeMode = mode
        queue.clear()
        writeInFlight = 0
        lastMotionWrite = nil
        lastMotionSend = nil
        motionGap = nil
        slowWritesInARow = 0
        paceNoticeGiven = false
        phase = .up
        if let endpoints {
            let mtu = endpoints.write.mtu.map { "ATT MTU \($0)" } ?? "ATT MTU unknown"
            say("\(carLabel): \(endpoints.profile) through \(mode); \(mtu), at most \(payloadLimit) bytes per write")
        }
        onEvent?(.opened(attempt: attempt))
    }

    // MARK: signals

    private func interfacesAdded(_ signal: DBusConnection.Signal) {
        guard signal.arguments.count >= 2, let path = signal.arguments[0].string,
              let properties = signal.arguments[1].dictionary?[BlueZNames.device]?.dictionary else { return }
        var device = devices[path] ?? BluetoothDevice(path: path)
        device.apply(properties)
        devices[path] = device
        if properties["ServicesResolved"]?.bool == true { resolved.insert(path) }
        considerDiscovered()
    }

    private func interfacesRemoved(_ signal: DBusConnection.Signal) {
        guard let path = signal.arguments.first?.string else { return }
        if let interfaces = signal.arguments.dropFirst().first?.strings, interfaces.contains(BlueZNames.device) {
            devices[path] = nil
            resolved.remove(path)
        }
        guard phase.hasDevice, let devicePath else { return }
        // The device, the UART service or one of its characteristics is gone (the car's GATT app restarted:
        // the radio link may stay up, but nothing written reaches the car any more).
        let watched = [devicePath, endpoints?.write.path, endpoints?.notify?.path, endpoints?.write.servicePath].compactMap { $0 }
        guard watched.contains(path) else { return }
        let what = path == devicePath ? "\(carLabel) is gone from bluetoothd" : "\(carLabel)'s UART service went away"
        lose(what, disconnect: false)
    }

    private func propertiesChanged(_ signal: DBusConnection.Signal) {
        guard signal.arguments.count >= 2, let interface = signal.arguments[0].string,
              let changed = signal.arguments[1].dictionary else { return }
        if interface == BlueZNames.characteristic, notifyByProperty, case .up = phase,
           signal.path == endpoints?.notify?.path, let value = changed["Value"]?.elements {
            return received(value.compactMap { if case .byte(let b) = $0 { return b } else { return nil } })
        }
        guard interface == BlueZNames.device else { return }
        let path = signal.path
        if var device = devices[path] {
            device.apply(changed)
            devices[path] = device
        } else if changed["Name"] != nil || changed["Alias"] != nil || changed["RSSI"] != nil {
            var device = BluetoothDevice(path: path)
            device.apply(changed)
            devices[path] = device
        }
        if let servicesResolved = changed["ServicesResolved"]?.bool {
            if servicesResolved { resolved.insert(path) } else { resolved.remove(path) }
        }
        if path == devicePath {
            if changed["Connected"]?.bool == false {
                return lostOrFailed("\(carLabel) disconnected (Connected = false)")
            }
            if changed["ServicesResolved"]?.bool == false {
                return lostOrFailed("\(carLabel) disconnected (ServicesResolved = false)")
            }
            if changed["ServicesResolved"]?.bool == true, case .connecting = phase {
                return readGATT(attempt: generation)
            }
        }
        considerDiscovered()
    }

    /// During discovery: connect as soon as the car is known.
    private func considerDiscovered() {
        guard case .searching = phase, discoveryAdapter != nil else { return }
        switch match() {
        case .one(let device): connect(device, attempt: generation)
        case .several(let candidates):
            attemptFailed(DeviceResolver.ambiguousSentence(
                target.description, candidates: candidates, use: "use ble://ADDRESS instead"), disconnect: false)
        case .none: break
        }
    }

    private func lostOrFailed(_ reason: String) {
        switch phase {
        case .up: lose(reason, disconnect: false)
        case .connecting, .opening: attemptFailed(reason, disconnect: false)
        case .none, .searching: break
        }
    }

    private func busClosed(_ error: DBusError) {
        subscriptions.removeAll()
        bus = nil
        discoveryAdapter = nil
        switch phase {
        case .up: lose("the D-Bus connection to bluetoothd closed (\(error.message))", disconnect: false)
        case .searching, .connecting, .opening: attemptFailed("the D-Bus connection to bluetoothd closed (\(error.message))", disconnect: false)
        case .none: break
        }
    }

    // MARK: the car's lines

    private func notifyReadable(_ events: IOEvents) {
        guard notifyFD >= 0 else { return }
        while true {
            let count = readBuffer.withUnsafeMutableBytes { Glibc.recv(notifyFD, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received(readBuffer[..<count])
                continue
            }
            let code = count < 0 ? Glibc.errno : 0
            if count < 0 && (code == EAGAIN || code == EWOULDBLOCK) { return }
            if count < 0 && code == EINTR { continue }
            return lostOrFailed(count == 0
                ? "\(carLabel) hung up its notifications"
                : "reading \(carLabel)'s notifications failed (\(SocketSupport.reason(code)))")
        }
    }

    private func received<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let lines = assembler.append(bytes)
        guard !lines.isEmpty else { return }
        let now = loop.now()
        for line in lines { onEvent?(.line(CarLine(time: now, text: line))) }
    }

    private func writerEvent(_ events: IOEvents) {
        guard case .acquired(let fd)? = writeMode else { return }
        if events.contains(.writable) {
            try? loop.change(fd, to: .readable)
            pump()
        }
        if events.contains(.hangup) || events.contains(.error) || events.contains(.readable) {
            lostOrFailed("\(carLabel) hung up the write socket")
        }
    }

    // MARK: writing

    /// At most this many bytes per ATT write: MTU − 3, 20 when bluetoothd does not tell the MTU.
    package var payloadLimit: Int { max(20, (endpoints?.write.mtu ?? 23) - 3) }

    private func pump() {
        guard case .up = phase, let mode = writeMode else { return }
        while writeInFlight == 0, let head = queue.head {
            if !mode.isAcknowledged, head.isMotion, let last = lastMotionWrite {
                let due = last + commandPacing
                if due > loop.now() {
                    if paceTimer == nil {
                        paceTimer = loop.schedule(at: due) { [weak self] in
                            self?.paceTimer = nil
                            self?.pump()
                        }
                    }
                    return
                }
            }
            let chunk = queue.headBytes().prefix(payloadLimit)
            switch mode {
            case .request, .command:
                // Out of the queue at once: a newer motion frame must not replace the one being written.
                let value = DBusValue.bytes(Array(chunk))
                writeInFlight = chunk.count
                queue.consume(chunk.count)
                if head.isMotion { lastMotionWrite = loop.now() }
                writeStartedAt = loop.now()
                writeValue(value, request: mode == .request)
                return
            case .acquired(let fd):
                let sent: Int?
                do {
                    sent = try chunk.withUnsafeBytes { try SocketSupport.send(fd, $0) }
                } catch {
                    return lose("writing to \(carLabel) failed (\(SocketSupport.reason((error as? SystemError)?.errno ?? EIO)))", disconnect: false)
                }
                guard let count = sent else {
                    try? loop.change(fd, to: [.readable, .writable])
                    armSocketStall()
                    return
                }
                cancelSocketStall()
                if head.isMotion { lastMotionWrite = loop.now() }
                completeWrite(count)
            }
        }
    }

    private func writeValue(_ value: DBusValue, request: Bool) {
        guard let bus, let path = endpoints?.write.path else { return }
        let connection = generation
        let options = request ? Self.requestOptions : Self.commandOptions
        bus.call(
            destination: BlueZNames.service, path: path, interface: BlueZNames.characteristic, member: "WriteValue",
            arguments: [value, options], timeout: self.options.stallTimeout
        ) { [weak self] result in
            guard let self, connection == self.generation, case .up = self.phase else { return }
            switch result {
            case .success:
                self.writeInFlight = 0
                if let started = self.writeStartedAt { self.writeAnswered(after: self.loop.now().duration(since: started)) }
                self.completeWrite(0)
                self.pump()
            case .failure(let error):
                self.writeInFlight = 0
                if error.name == "org.freedesktop.DBus.Error.NoReply" {
                    // Stall (§6): disconnect, so nothing bluetoothd still holds reaches the car later.
                    self.lose(
                        "\(self.carLabel) did not acknowledge a frame within \(SocketSupport.secondsText(self.options.stallTimeout)) s: the link is down",
                        disconnect: true, stalled: true)
                } else {
                    self.lose(BLESentences.busFailure(error, doing: "write to \(self.carLabel)"), disconnect: true)
                }
            }
        }
    }

    /// `WriteValue`'s options, made once: a frame is written up to 20 times a second.
    private static let requestOptions = DBusValue.properties(["type": .string("request")])
    private static let commandOptions = DBusValue.properties(["type": .string("command")])

    /// The acquired socket refused a frame: if it takes nothing more for `stallTimeout`, that is a stall
    /// (§6), as an unacknowledged write request is; the radio link is dropped, so nothing bluetoothd still
    /// holds reaches the car later, and the next connection starts with the handshake.
    private func armSocketStall() {
        guard socketStallTimer == nil else { return }
        socketStallTimer = loop.schedule(after: options.stallTimeout) { [weak self] in
            guard let self else { return }
            self.socketStallTimer = nil
            self.lose(
                "\(self.carLabel) took no frame for \(SocketSupport.secondsText(self.options.stallTimeout)) s (its write socket stayed full): the link is down",
                disconnect: true, stalled: true)
        }
    }

    private func cancelSocketStall() {
        if let socketStallTimer { loop.cancel(socketStallTimer) }
        socketStallTimer = nil
    }

    /// One ATT write done: `count` more bytes leave the queue (0 when they left as the write started).
    private func completeWrite(_ count: Int) {
        queue.consume(count)
        writesCompleted += 1
        if drainWatch != .off { onEvent?(.progressed(drained: isDrained())) }
    }

    // MARK: loss

    /// The attempt failed: closes what it opened (disconnecting a half-made connection when `disconnect`),
    /// then reports.
    private func attemptFailed(_ reason: String, disconnect: Bool) {
        guard phase.isAttempting else { return }
        tearDown(disconnect: disconnect)
        onEvent?(.failed(reason, stalled: false))
    }

    /// The connection is lost: closes it (dropping the radio link when `disconnect`, so nothing bluetoothd
    /// still holds reaches the car later), then reports.
    private func lose(_ reason: String, disconnect: Bool, stalled: Bool = false) {
        guard case .up = phase else { return }
        tearDown(disconnect: disconnect)
        onEvent?(.failed(reason, stalled: stalled))
    }

    /// Ends the attempt or connection: stops a discovery, closes the sockets and forgets the writes; with
    /// `disconnect`, asks bluetoothd to drop the radio link (a stall or a half-made connection: nothing it
    /// still holds may arrive later).
    private func tearDown(disconnect: Bool) {
        stopDiscovery()
        generation += 1
        phase = .none
        closeSockets()
        if let paceTimer { loop.cancel(paceTimer) }
        paceTimer = nil
        cancelSocketStall()
        queue.clear()
        writeInFlight = 0
        notifyByProperty = false
        drainWatch = .off
        assembler = LineAssembler()
        if disconnect, let devicePath, let bus { Self.disconnect(devicePath, on: bus, within: .seconds(5)) }
        writeMode = nil
    }

    /// `Device1.Disconnect` of `devicePath`; `answered` runs when bluetoothd replied (or the call failed).
    private static func disconnect(
        _ devicePath: String, on bus: any DBusClient, within timeout: Duration, answered: @escaping () -> Void = {}
    ) {
        bus.call(
            destination: BlueZNames.service, path: devicePath, interface: BlueZNames.device, member: "Disconnect",
            arguments: [], timeout: timeout
        ) { _ in answered() }
    }

    private func closeSockets() {
        if notifyFD >= 0 {
            loop.unwatch(notifyFD)
            Syscall.close(notifyFD)
            notifyFD = -1
        }
        if case .acquired(let fd)? = writeMode {
            loop.unwatch(fd)
            Syscall.close(fd)
            writeMode = nil
        }
    }
}

private extension String {
    /// `"HMSoft"` for a name target, the address as it is.
    func quotedIfName(_ target: BLETransport.Target) -> String {
        if case .name = target { return "\"\(self)\"" }
        return self
    }
}
