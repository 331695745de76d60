import DriveBluetooth
import DriveCore
import DriveLinkModel
import DriveSystem

/// One device a Bluetooth search found, as the page lists it.
package struct ScannedDevice: Hashable, Sendable {
    /// `AA:BB:CC:DD:EE:FF`, upper case.
    package var address: String
    /// Its name or alias, once known.
    package var name: String?
    /// The signal strength, dBm.
    package var rssi: Int?
    /// Paired with this computer.
    package var paired: Bool
    /// It offers the Serial Port service (known once paired).
    package var serialPort: Bool
    /// The BLE UART profile its services show (an HM-10, Nordic UART car), or nil.
    package var profile: BLEUARTProfile?
    /// LE, BR/EDR or both as far as its properties tell (`BluetoothDevice.transports`).
    package var transports: BluetoothTransports

    /// Creates a result.
    package init(
        address: String, name: String? = nil, rssi: Int? = nil, paired: Bool = false, serialPort: Bool = false,
        profile: BLEUARTProfile? = nil, transports: BluetoothTransports = []
    ) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.paired = paired
        self.serialPort = serialPort
        self.profile = profile
        self.transports = transports
    }
}

/// What a scanner reports (on the event loop).
package enum ScanEvent: Sendable {
    /// Searching, on this adapter (its description: `hci0 (00:1A:7D:DA:71:13)`).
    case started(adapter: String)
    /// A device in range (again when its name, RSSI or services came in).
    case found(ScannedDevice)
    /// The search cannot run: the sentence (the same `carbridge scan` prints).
    case failed(String)
}

/// Where the dashboard's Bluetooth search gets its results: bluetoothd (`BlueZScanner`), or a fake in
/// the tests. Driven by the event loop and never blocking it; `DashboardLoop` bounds the time and calls
/// `stop`, after which no event may come. Loop thread only.
package protocol BluetoothScanning: AnyObject {
    /// Starts searching; `event` is called on the loop thread.
    func start(_ event: @escaping (ScanEvent) -> Void)
    /// Stops searching (no events after this).
    func stop()
}

/// The real scanner: discovery through bluetoothd on carbridge's own event loop (`BlueZDiscovery`:
/// asynchronous sd-bus calls, no thread). Without bluetoothd it fails with `carbridge scan`'s sentence;
/// there is no raw HCI fallback from the dashboard.
package final class BlueZScanner: BluetoothScanning {
    private let discovery: BlueZDiscovery

    /// A scanner on `loop`.
    package init(loop: EventLoop) { discovery = BlueZDiscovery(loop: loop) }

    package func start(_ event: @escaping (ScanEvent) -> Void) {
        discovery.start { update in
            switch update {
            case .started(let adapter): event(.started(adapter: "\(adapter.name) (\(adapter.address))"))
            case .found(let device):
                event(.found(ScannedDevice(
                    address: device.address, name: device.knownName, rssi: device.rssi, paired: device.paired,
                    serialPort: device.offersSerialPort, profile: device.bleProfile, transports: device.transports)))
            case .failed(let failure): event(.failed(failure.description))
            }
        }
    }

    package func stop() { discovery.stop() }
}

/// The dashboard's Bluetooth search as the page shows it (a value in `DashboardState`).
package struct BluetoothSearchState: Hashable, Sendable {
    /// Where the search is.
    package enum Phase: String, Sendable {
        /// No search since the start.
        case idle
        /// Searching now.
        case searching
        /// The last search ran its time.
        case finished
        /// The last search could not run.
        case failed
    }

    /// Where the search is.
    package var phase: Phase = .idle
    /// The last search's devices, in the order found (at most `BluetoothSearch.maximumDevices`).
    package var devices: [ScannedDevice] = []
    /// What happened last, in words (the failure's sentence, what was saved, why a pick was refused).
    package var message = ""
    /// The link URL saved in this run, if any.
    package var saved: String?

    /// Creates an idle state.
    package init() {}

    /// The link URL *Use this car* saves for `device`: `ble://NAME` for a BLE UART car (`ble://ADDRESS` when it
    /// has no name or another device found has the same name), else `rfcomm://ADDRESS`.
    package func linkURL(for device: ScannedDevice) -> String {
        guard device.profile != nil else { return "rfcomm://\(device.address)" }
        let shared = device.name.map { name in
            devices.contains { $0.address != device.address && $0.name?.lowercased() == name.lowercased() }
        } ?? false
        return BluetoothTool.bleLinkURL(address: device.address, name: device.name, nameIsShared: shared)
    }
}

/// The search's rules on the loop (pure: time is passed in, the scanner and the saving are the
/// caller's): one search at a time, results by address, and a pick only among the current results.
struct BluetoothSearch {
    /// How long one search runs (an HC-05 tells its name about 10 s in; `carbridge scan`'s default).
    static let duration: Duration = .seconds(12)
    /// At most this many devices are listed.
    static let maximumDevices = 32

    private(set) var state = BluetoothSearchState()
    /// When the running search ends.
    private(set) var deadline: Instant?

    /// A search was asked for at `now`: true when one should start (false: one runs already).
    mutating func begin(at now: Instant) -> Bool {
        guard state.phase != .searching else {
            state.message = "already searching (\(Self.duration.components.seconds) s in all)"
            return false
        }
        state.phase = .searching
        state.devices = []
        state.message = "searching through bluetoothd for \(Self.duration.components.seconds) s…"
        deadline = now.advanced(by: Self.duration)
        return true
    }

    /// An event of the running search.
    mutating func received(_ event: ScanEvent) {
        guard state.phase == .searching else { return }
        switch event {
        case .started(let adapter):
            state.message = "searching on \(adapter) for \(Self.duration.components.seconds) s…"
        case .found(let device):
            if let index = state.devices.firstIndex(where: { $0.address == device.address }) {
                var merged = device
                if merged.name == nil { merged.name = state.devices[index].name }
                if merged.rssi == nil { merged.rssi = state.devices[index].rssi }
                if merged.profile == nil { merged.profile = state.devices[index].profile }
                merged.transports.formUnion(state.devices[index].transports)
                state.devices[index] = merged
            } else if state.devices.count < Self.maximumDevices {
                state.devices.append(device)
            }
        case .failed(let sentence):
            state.phase = .failed
            state.message = sentence
            deadline = nil
        }
    }

    /// The search's time is up.
    mutating func finish() {
        guard state.phase == .searching else { return }
        state.phase = .finished
        deadline = nil
        let seconds = Self.duration.components.seconds
        state.message = state.devices.isEmpty
            ? "no Bluetooth devices answered within \(seconds) s (is the car switched on and discoverable?)"
            : "found \(state.devices.count) device\(state.devices.count == 1 ? "" : "s") in \(seconds) s: pick the car"
    }

    /// The operator picked `address`: the URL to save (`BluetoothSearchState.linkURL(for:)`), or nil (the
    /// reason is in the message).
    mutating func pick(_ address: String) -> String? {
        guard let device = state.devices.first(where: { $0.address == address }) else {
            state.message = "not saved: \(address) was not found by the last search"
            return nil
        }
        return state.linkURL(for: device)
    }

    /// Saving `url` worked (in `file`) or not.
    mutating func saving(_ url: String) {
        state.message = "saving link.url = \"\(url)\"…"
    }

    mutating func saved(_ url: String, in file: String) {
        state.saved = url
        state.message = "saved link.url = \"\(url)\" in \(file); takes effect at the next start (the running link is not switched)"
    }

    mutating func notSaved(_ url: String, because reason: String) {
        state.message = "not saved (\(url)): \(reason)"
    }
}
