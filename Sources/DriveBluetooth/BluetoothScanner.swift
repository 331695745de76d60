import CBluetooth
import Glibc

/// Classic Bluetooth inquiry plus remote names through libbluetooth: the phone app's "BT Search".
///
/// Blocking by nature (an inquiry lasts `seconds`), so it is for the one-shot `carbridge scan`
/// command, never for the running bridge's event loop.
package enum BluetoothScanner {
    /// One device that answered the inquiry.
    package struct Device: Hashable, Sendable {
        /// Its address, `AA:BB:CC:DD:EE:FF`.
        package var address: String
        /// Its friendly name, or nil when it did not tell.
        package var name: String?
    }

    /// Why a scan could not run, as one sentence that says what to do.
    package struct ScanError: Error, CustomStringConvertible {
        /// The sentence.
        package var description: String
    }

    /// Runs an inquiry on `adapter` (e.g. `hci0`; nil = the first adapter that is up) for about `seconds`.
    package static func scan(adapter: String?, seconds: Int, readNames: Bool = true) throws(ScanError) -> [Device] {
        let deviceID: Int32
        if let adapter {
            deviceID = hci_devid(adapter)
            if deviceID < 0 {
                // hci_devid finds adapters that are up only.
                if access("/sys/class/bluetooth/\(adapter)", F_OK) == 0 {
                    throw ScanError(description: downSentence(adapter))
                }
                throw ScanError(description: "there is no Bluetooth adapter \"\(adapter)\": list them with `bluetoothctl list` or `hciconfig`")
            }
        } else {
            deviceID = hci_get_route(nil)
            if deviceID < 0 { throw ScanError(description: noAdapterSentence(errno)) }
        }
        let socketFD = hci_open_dev(deviceID)
        if socketFD < 0 { throw ScanError(description: noAdapterSentence(errno)) }
        defer { close(socketFD) }

        // The inquiry length is in units of 1.28 s.
        let units = Int32(max(1, min(48, (Double(seconds) / 1.28).rounded(.up))))
        var results: UnsafeMutablePointer<inquiry_info>?
        let count = hci_inquiry(deviceID, units, 255, nil, &results, Int(IREQ_CACHE_FLUSH))
        if count < 0 {
            let code = errno
            throw ScanError(description: "the Bluetooth inquiry failed: \(inquirySentence(code))")
        }
        defer { bt_free(results) }
        var devices: [Device] = []
        for index in 0..<Int(count) {
            guard let info = results?[index] else { continue }
            var address = info.bdaddr
            var text = [CChar](repeating: 0, count: 19)
            ba2str(&address, &text)
            var name: String?
            if readNames {
                var buffer = [CChar](repeating: 0, count: 249)
                if hci_read_remote_name(socketFD, &address, Int32(buffer.count), &buffer, 5000) >= 0 {
                    name = Self.string(fromCString: buffer)
                }
            }
            devices.append(Device(address: Self.string(fromCString: text), name: name))
        }
        return devices
    }

    /// The text of a NUL-terminated C buffer (up to its first NUL), as UTF-8 with repairs.
    static func string(fromCString buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The sentence for failing to find or open an adapter.
    static func noAdapterSentence(_ code: Int32) -> String {
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return "this kernel has no Bluetooth support: load it with `sudo modprobe bluetooth`"
        case EPERM, EACCES:
            return "not allowed to use the Bluetooth adapter: run as root or give carbridge CAP_NET_RAW"
        default:
            return "no Bluetooth adapter is up: check `bluetoothctl list`, `rfkill unblock bluetooth`, `bluetoothctl power on`"
        }
    }

    /// The sentence for an adapter that exists but is down (powered off, or rfkill-blocked).
    static func downSentence(_ adapter: String) -> String {
        func blocked(_ kind: String) -> Bool {
            return listDirectory("/sys/class/bluetooth/\(adapter)").filter { $0.hasPrefix("rfkill") }.contains { entry in
                guard let file = fopen("/sys/class/bluetooth/\(adapter)/\(entry)/\(kind)", "r") else { return false }
                defer { fclose(file) }
                return fgetc(file) == Int32(UInt8(ascii: "1"))
            }
        }
        if blocked("hard") { return "the Bluetooth adapter \(adapter) is blocked by a hardware switch (rfkill): switch the radio on" }
        if blocked("soft") { return "the Bluetooth adapter \(adapter) is blocked by rfkill: run `rfkill unblock bluetooth`, then `sudo hciconfig \(adapter) up`" }
        return "the Bluetooth adapter \(adapter) is down: run `sudo hciconfig \(adapter) up` (or start bluetoothd and run `bluetoothctl power on`)"
    }

    /// The names in directory `path` (`.` and `..` included), none when it cannot be listed.
    static func listDirectory(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            names.append(name)
        }
        return names
    }

    static func inquirySentence(_ code: Int32) -> String {
        switch code {
        case ENETDOWN: return "the adapter is down: `bluetoothctl power on`"
        case EPERM, EACCES: return "not allowed: run as root or give carbridge CAP_NET_RAW"
        case EBUSY: return "the adapter is busy (another scan running?): try again"
        default: return String(cString: strerror(code))
        }
    }
}
