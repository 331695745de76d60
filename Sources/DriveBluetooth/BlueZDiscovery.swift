import DriveCore
import DriveDBus
import DriveSystem

/// A discovery through bluetoothd driven by an event loop the caller already runs (the dashboard's:
/// `carbridge run`'s loop), never spinning it and never blocking: every step is an asynchronous D-Bus
/// call whose reply comes back on the loop. `carbridge scan` does the same through `BluetoothTool.scan`
/// on a private loop; the sentences for failures are the same.
///
/// `start` connects to the system bus, finds the adapter, follows the devices and starts discovery;
/// `handler` gets `.started`, then `.found` for every update of a device in range (it may come again
/// with its name, RSSI or services), or one `.failed` after which nothing more comes. `stop` stops the
/// discovery (fire and forget) and closes the connection; the caller bounds the time. Loop thread only.
package final class BlueZDiscovery {
    /// What the discovery reports.
    package enum Event {
        /// Discovery runs on this adapter.
        case started(BluetoothAdapter)
        /// A device in range, as bluetoothd knows it now.
        case found(BluetoothDevice)
        /// It could not run (no bus, no bluetoothd, no adapter, the adapter off): the sentence.
        case failed(BluetoothFailure)
    }

    private let loop: EventLoop
    private let bus: DBusConnection.Bus
    private var client: BlueZClient?
    private var adapter: BluetoothAdapter?
    private var handler: ((Event) -> Void)?

    /// A discovery on `loop` (nothing happens until `start`).
    package init(loop: EventLoop, bus: DBusConnection.Bus = .system) {
        self.loop = loop
        self.bus = bus
    }

    deinit { client?.close() }

    /// Starts discovering on `adapterName` (nil: the first adapter).
    package func start(adapterName: String? = nil, _ handler: @escaping (Event) -> Void) {
        self.handler = handler
        let client: BlueZClient
        do {
            client = try BlueZClient(loop: loop, bus: bus)
        } catch {
            return fail(BluetoothFailure(noBus: error))
        }
        self.client = client
        client.managedObjects { [weak self] result in
            guard let self, self.handler != nil else { return }
            switch result {
            case .failure(let error):
                self.fail(BluetoothFailure("GetManagedObjects", failed: error))
            case .success(let objects):
                let adapter: BluetoothAdapter
                do throws(BluetoothFailure) {
                    adapter = try BluetoothTool.adapter(adapterName, in: objects)
                } catch {
                    return self.fail(error)
                }
                self.discover(on: adapter, client: client)
            }
        }
    }

    private func discover(on adapter: BluetoothAdapter, client: BlueZClient) {
        var seen: Set<String> = []
        client.watchDevices(adapterPath: adapter.path) { [weak self] device, properties in
            // In range now: added by this discovery, or its RSSI (or name) came in.
            if properties.contains("InterfacesAdded") || properties.contains("RSSI") || properties.contains("Name") {
                seen.insert(device.path)
            }
            guard seen.contains(device.path) else { return }
            self?.handler?(.found(device))
        }
        client.startDiscovery(adapterPath: adapter.path) { [weak self] result in
            guard let self, self.handler != nil else { return }
            if case .failure(let error) = result, error.name != "org.bluez.Error.InProgress" {
                if error.name == "org.bluez.Error.NotReady" {
                    return self.fail(BluetoothFailure(
                        AdapterAdvice.problem(BluetoothAdapter(path: adapter.path), rfkill: AdapterAdvice.rfkill(adapter.name))
                            ?? "the Bluetooth adapter \(adapter.name) is not ready: run `bluetoothctl power on`"))
                }
                return self.fail(BluetoothFailure("StartDiscovery", failed: error))
            }
            self.adapter = adapter
            self.handler?(.started(adapter))
        }
    }

    /// Stops: no more events; discovery is stopped (when it was started) and the connection closed.
    package func stop() {
        handler = nil
        guard let client else { return }
        self.client = nil
        if let adapter {
            self.adapter = nil
            client.stopDiscovery(adapterPath: adapter.path) { [loop] _ in
                // Not from inside the connection's own dispatch.
                loop.execute { client.close() }
            }
        } else {
            loop.execute { client.close() }
        }
    }

    private func fail(_ failure: BluetoothFailure) {
        let handler = self.handler
        stop()
        handler?(.failed(failure))
    }
}
