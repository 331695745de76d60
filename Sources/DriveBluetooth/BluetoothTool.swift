import DriveCore
import DriveDBus
import DriveLink

/// The one-shot Bluetooth operations behind `carbridge scan`, `pair`, `unpair` and `rfcomm://NAME`
/// links, through bluetoothd. Each runs on its own private loop (`BlueZSession`) and returns when done.
package enum BluetoothTool {
    // MARK: scan

    /// One scan result line: `98:D3:31:F5:2A:11  HC-05  [RSSI -52 dBm, bredr, paired, trusted, serial port]`,
    /// `C8:FD:19:12:34:56  HMSoft  [RSSI -60 dBm, le, HM-10 UART]` (the transport as far as it is known).
    package static func line(_ device: BluetoothDevice) -> String {
        var details: [String] = []
        if let rssi = device.rssi { details.append("RSSI \(rssi) dBm") }
        if !device.transports.isEmpty { details.append(device.transports.description) }
        if device.paired { details.append("paired") }
        if device.trusted { details.append("trusted") }
        if device.offersSerialPort { details.append("serial port") }
        if let profile = device.bleProfile { details.append(profile.uartLabel) }
        let text = "\(device.address)  \(device.knownName ?? "(no name)")"
        return details.isEmpty ? text : text + "  [" + details.joined(separator: ", ") + "]"
    }

    /// The link URL that drives a BLE UART car: `ble://NAME`, or `ble://ADDRESS` when it has no name or
    /// `nameIsShared` (another device nearby has the same name, so the name would not find this one).
    package static func bleLinkURL(address: String, name: String?, nameIsShared: Bool = false) -> String {
        guard let name, !name.isEmpty, name.utf8.count <= 248, !nameIsShared else { return "ble://\(address)" }
        return "ble://" + LinkURL.encodeDeviceName(name)
    }

    /// One line per BLE UART car among `devices`, saying how to drive it: `HMSoft (C8:FD:19:12:34:56),
    /// HM-10 UART: carbridge run --link ble://HMSoft`. Empty when there is none.
    package static func bleSuggestions(_ devices: [BluetoothDevice]) -> [String] {
        devices.compactMap { device in
            guard let profile = device.bleProfile, let url = device.bleLinkURL(among: devices) else { return nil }
            return "\(device.label), \(profile.uartLabel): carbridge run --link \(url)"
        }
    }

    /// The adapter to use, checked: it exists and is powered.
    static func adapter(_ name: String?, in objects: BlueZObjects) throws(BluetoothFailure) -> BluetoothAdapter {
        guard let adapter = objects.adapter(named: name) else {
            if objects.adapters.isEmpty {
                throw BluetoothFailure("bluetoothd has no Bluetooth adapter: plug one in or load its driver (`bluetoothctl list` shows none)")
            }
            throw BluetoothFailure("there is no Bluetooth adapter \"\(name ?? "")\" (bluetoothd has \(objects.adapters.map(\.name).joined(separator: ", ")))")
        }
        if let problem = AdapterAdvice.problem(adapter, rfkill: AdapterAdvice.rfkill(adapter.name)) {
            throw BluetoothFailure(problem)
        }
        return adapter
    }

    /// Discovers through bluetoothd on `adapterName` for `seconds`, calling `found` once per device as
    /// soon as its name is known (the rest at the end, nameless). `transport` (empty: both) is bluetoothd's
    /// discovery filter, and a device known not to use it is not reported (another client's discovery can
    /// widen the filter: bluetoothd merges them). Returns how many were found; throws with `noBluetoothd`
    /// when bluetoothd does not answer (the caller falls back to a raw inquiry).
    package static func scan(adapterName: String?, seconds: Int, transport: BluetoothTransports = [],
                            found: (BluetoothDevice) -> Void,
                            started: (BluetoothAdapter) -> Void = { _ in }) throws(BluetoothFailure) -> Int {
        let session = try BlueZSession()
        let objects = try session.objects()
        let adapter = try adapter(adapterName, in: objects)
        var seen: Set<String> = []
        var printed: Set<String> = []
        var pending: [String: BluetoothDevice] = [:]
        var stream: [BluetoothDevice] = []
        session.client.watchDevices(adapterPath: adapter.path) { device, properties in
            // In range now: it was added by this discovery, or its RSSI (or name) came in.
            if properties.contains("InterfacesAdded") || properties.contains("RSSI") || properties.contains("Name") {
                seen.insert(device.path)
            }
            guard seen.contains(device.path), !printed.contains(device.path) else { return }
            // One that does not match yet may when more of its properties come (a dual-mode device's services).
            if device.knownName != nil, device.matches(transport) {
                printed.insert(device.path)
                pending[device.path] = nil
                stream.append(device)
            } else {
                pending[device.path] = device
            }
        }
        do {
            try session.call("StartDiscovery") {
                session.client.startDiscovery(adapterPath: adapter.path, transport: transport, $0)
            }
        } catch {
            if error.dbus?.name == "org.bluez.Error.NotReady" {
                throw BluetoothFailure(AdapterAdvice.problem(BluetoothAdapter(path: adapter.path), rfkill: AdapterAdvice.rfkill(adapter.name))
                    ?? "the Bluetooth adapter \(adapter.name) is not ready: run `bluetoothctl power on`")
            }
            if error.dbus?.name != "org.bluez.Error.InProgress" { throw error }
        }
        started(adapter)
        session.spin(for: .seconds(Int64(seconds))) {
            for device in stream { found(device) }
            stream.removeAll()
            return false
        }
        for device in stream { found(device) }
        _ = session.wait(timeout: .seconds(5)) { (done: @escaping (Result<Void, DBusError>) -> Void) in
            session.client.stopDiscovery(adapterPath: adapter.path, done)
        }
        var nameless = 0
        for path in pending.keys.sorted() {
            if let device = session.client.devices[path], device.matches(transport) {
                found(device)
                nameless += 1
            }
        }
        return printed.count + nameless
    }

    // MARK: finding one device

    /// The device `target` (address, name or alias) names among what bluetoothd knows; when nothing
    /// matches, discovers for up to `searchSeconds` until something does.
    static func find(_ target: String, session: BlueZSession, adapter: BluetoothAdapter?, preferPaired: Bool,
                     searchSeconds: Int, notice: (String) -> Void) throws(BluetoothFailure) -> BluetoothDevice {
        var objects = try session.objects()
        func candidates() -> [BluetoothDevice] {
            var all = objects.devices
            for device in session.client.devices.values where !all.contains(where: { $0.path == device.path }) {
                all.append(device)
            }
            return all.filter { adapter == nil || $0.adapterPath == adapter!.path }
        }
        var match = DeviceResolver.resolve(target, among: candidates(), preferPaired: preferPaired)
        if match == .none, searchSeconds > 0 {
            let searchAdapter = try Self.adapter(adapter?.name, in: objects)
            notice("searching for \(target) on \(searchAdapter.name) (up to \(searchSeconds) s; an HC-05 tells its name about 10 s into the search)")
            session.client.watchDevices(adapterPath: searchAdapter.path) { _, _ in }
            do {
                try session.call("StartDiscovery") { session.client.startDiscovery(adapterPath: searchAdapter.path, $0) }
            } catch {
                if error.dbus?.name != "org.bluez.Error.InProgress" { throw error }
            }
            session.spin(for: .seconds(Int64(searchSeconds))) {
                if case .none = DeviceResolver.resolve(target, among: candidates(), preferPaired: preferPaired) { return false }
                return true
            }
            _ = session.wait(timeout: .seconds(5)) { (done: @escaping (Result<Void, DBusError>) -> Void) in
                session.client.stopDiscovery(adapterPath: searchAdapter.path, done)
            }
            objects = (try? session.objects()) ?? objects
            match = DeviceResolver.resolve(target, among: candidates(), preferPaired: preferPaired)
        }
        switch match {
        case .one(let device): return device
        case .none: throw BluetoothFailure(DeviceResolver.notFoundSentence(target, known: candidates()))
        case .several(let devices):
            throw BluetoothFailure(DeviceResolver.ambiguousSentence(target, candidates: devices, use: "name it by its address instead"))
        }
    }

    // MARK: pair / unpair

    /// Pairs with `target` using `pin`, marks it trusted. `say` gets progress lines; throws the sentence
    /// of what failed.
    package static func pair(_ target: String, pin: String, adapterName: String?, searchSeconds: Int,
                            say: @escaping (String) -> Void) throws(BluetoothFailure) {
        let session = try BlueZSession()
        let objects = try session.objects()
        let adapter = try adapterName.map { (name) throws(BluetoothFailure) in try Self.adapter(name, in: objects) }
        var device = try find(target, session: session, adapter: adapter, preferPaired: false, searchSeconds: searchSeconds, notice: say)
        if let problem = AdapterAdvice.problem(objects.adapters.first { $0.path == device.adapterPath } ?? BluetoothAdapter(path: device.adapterPath),
                                               rfkill: AdapterAdvice.rfkill(BluetoothAdapter(path: device.adapterPath).name)) {
            throw BluetoothFailure(problem)
        }
        if device.paired {
            say("\(device.label) is already paired")
        } else {
            say("pairing with \(device.label) on \(BluetoothAdapter(path: device.adapterPath).name), PIN \(pin)")
            var events: [PairingAgent.Event] = []
            let outcome = session.wait(timeout: .seconds(75)) { (done: @escaping (Result<Void, DBusError>) -> Void) in
                session.client.pair(device, pin: pin, timeout: .seconds(60), events: { event in
                    events.append(event)
                    switch event {
                    case .gavePIN(let text): say("the car asked for a PIN: gave \(text)")
                    case .gavePasskey(let number): say("the car asked for a passkey: gave \(number)")
                    case .confirmed(let number): say("confirmed the pairing code \(number) (Secure Simple Pairing)")
                    case .displayed(let text): say("pairing code \(text) (enter it on the car if it asks)")
                    case .rejected(let what): say("refused an agent request not for this device: \(what)")
                    case .cancelled: say("bluetoothd cancelled the agent request")
                    case .authorized, .released: break
                    }
                }, done: done)
            }
            switch outcome {
            case nil:
                throw BluetoothFailure("pairing with \(device.label) failed: bluetoothd did not finish within 75 s")
            case .failure(let error)?:
                if error.meansServiceMissing { throw BluetoothFailure("bluetoothd is not running", noBluetoothd: true) }
                if error.name != "org.bluez.Error.AlreadyExists" {
                    throw BluetoothFailure(PairingFailure.sentence(error, device: device.label, pin: pin), dbus: error)
                }
                say("\(device.label) is already paired")
            case .success?:
                say("paired with \(device.label)")
            }
            device.paired = true
        }
        if !device.trusted {
            try session.call("setting Trusted") { session.client.setTrusted(device, true, $0) }
        }
        // Its services as they are now (asked again: the client's copy is from before the pairing): an LE
        // car's GATT services are resolved while it is connected to pair.
        let latest = (try? session.objects())?.devices.first { $0.path == device.path } ?? device
        say("\(device.label) is paired and trusted; \(driveHint(latest))")
    }

    /// How to drive a paired device: `ble://NAME` for a BLE UART car (`[link] ble_service` and `ble_write`
    /// for an LE device whose UART carbridge does not recognise), else `rfcomm://NAME`.
    package static func driveHint(_ device: BluetoothDevice) -> String {
        if let profile = device.bleProfile {
            return "drive it with: carbridge run --link \(bleLinkURL(address: device.address, name: device.knownName)) (\(profile.uartLabel))"
        }
        if device.transports == .le {
            return "drive it with: carbridge run --link \(bleLinkURL(address: device.address, name: device.knownName)), "
                + "with [link] ble_service and ble_write set to its UART service and characteristic (none carbridge knows was found)"
        }
        return "drive it with: carbridge run --link rfcomm://\(device.knownName.map(LinkURL.encodeDeviceName) ?? device.address)"
    }

    /// Removes the pairing (and bluetoothd's record) of `target`.
    package static func unpair(_ target: String, adapterName: String?, say: (String) -> Void) throws(BluetoothFailure) {
        let session = try BlueZSession()
        let objects = try session.objects()
        let adapter = try adapterName.map { (name) throws(BluetoothFailure) -> BluetoothAdapter in
            guard let found = objects.adapter(named: name) else { throw BluetoothFailure("there is no Bluetooth adapter \"\(name)\"") }
            return found
        }
        let device = try find(target, session: session, adapter: adapter, preferPaired: true, searchSeconds: 0, notice: say)
        try session.call("RemoveDevice") { session.client.removeDevice(device, $0) }
        say(device.paired ? "removed the pairing with \(device.label)" : "\(device.label) was not paired; bluetoothd forgot it")
    }

    // MARK: links by name

    /// `rfcomm://NAME[/CHANNEL]` → address and channel: the device by name or alias among those
    /// bluetoothd knows (a paired one wins over merely discovered ones of the same name), the
    /// channel from its SDP Serial Port record when none was given (1, with a notice, if it has none).
    /// Runs before the bridge's loop starts, on a private loop.
    package static func resolveLink(name: String, channel: Int?, notice: (String) -> Void) throws(BluetoothFailure) -> LinkURL {
        let session: BlueZSession
        let objects: BlueZObjects
        do {
            session = try BlueZSession()
            objects = try session.objects()
        } catch {
            if error.noBluetoothd {
                throw BluetoothFailure("rfcomm://\(LinkURL.encodeDeviceName(name)) finds the car by name through bluetoothd, which is not running: start it (`systemctl start bluetooth`) or use rfcomm://ADDRESS[/CHANNEL]", noBluetoothd: true)
            }
            throw error
        }
        let device: BluetoothDevice
        switch DeviceResolver.resolve(name, among: objects.devices, preferPaired: true) {
        case .one(let found): device = found
        case .none: throw BluetoothFailure(DeviceResolver.notFoundSentence(name, known: objects.devices))
        case .several(let devices):
            throw BluetoothFailure(DeviceResolver.ambiguousSentence(name, candidates: devices, use: "use rfcomm://ADDRESS instead"))
        }
        if !device.paired {
            notice("\(device.label) is not paired: if the car refuses the connection, run `carbridge pair \(device.address)`")
        }
        if let channel {
            notice("rfcomm://\(LinkURL.encodeDeviceName(name)) is \(device.address), channel \(channel)")
            return .rfcomm(address: device.address, channel: channel)
        }
        let local = objects.adapters.first { $0.path == device.adapterPath }?.address
        var client: SDPClient?
        let result = session.wait(timeout: .seconds(15)) { (done: @escaping (Result<[SDPRecord], SDPParseError>) -> Void) in
            client = SDPClient.query(loop: session.loop, address: device.address, localAddress: local, timeout: .seconds(12), done: done)
        }
        client?.cancel()
        switch result {
        case .success(let records)?:
            if let record = records.first(where: { $0.rfcommChannel != nil }), let found = record.rfcommChannel {
                notice("rfcomm://\(LinkURL.encodeDeviceName(name)) is \(device.address); its Serial Port \(record.name.map { "\"\($0)\" " } ?? "")is on RFCOMM channel \(found) (SDP)")
                return .rfcomm(address: device.address, channel: found)
            }
            notice("\(device.label) has no Serial Port record with an RFCOMM channel (SDP): trying channel \(LinkURL.defaultChannel); add /CHANNEL to the URL if that is wrong")
        case .failure(let error)?:
            notice("could not read \(device.label)'s Serial Port record (\(error)): trying channel \(LinkURL.defaultChannel); add /CHANNEL to the URL if that is wrong")
        case nil:
            notice("\(device.label) did not answer the SDP query: trying channel \(LinkURL.defaultChannel); add /CHANNEL to the URL if that is wrong")
        }
        return .rfcomm(address: device.address, channel: LinkURL.defaultChannel)
    }
}
