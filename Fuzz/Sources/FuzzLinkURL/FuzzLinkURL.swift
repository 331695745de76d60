// Link URLs (`--link`, `[link] url`): LinkURL(parsing:); an accepted URL's canonical spelling must parse
// back to the same link.
import DriveLink
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLinkURL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    do {
        let url = try LinkURL(parsing: text)
        let canonical = url.description
        do {
            let again = try LinkURL(parsing: canonical)
            fuzzCheck(again == url, "\(text.debugDescription) → \(canonical.debugDescription) → \(again)")
        } catch {
            fuzzCheck(false, "\(text.debugDescription) → \(canonical.debugDescription) is rejected: \(error)")
        }
        switch url {
        case .rfcomm(let address, let channel):
            fuzzCheck(LinkURL.isBluetoothAddress(address) && (1...30).contains(channel), "rfcomm \(address) \(channel)")
        case .rfcommDevice(let name, let channel):
            fuzzCheck(!name.isEmpty && (channel.map { (1...30).contains($0) } ?? true), "rfcomm name \(name) \(String(describing: channel))")
        case .ble(let address):
            fuzzCheck(LinkURL.isBluetoothAddress(address), "ble \(address)")
        case .bleDevice(let name):
            fuzzCheck(!name.isEmpty, "ble name \(name)")
        case .serial(let path, let baud):
            fuzzCheck(path.hasPrefix("/") && LinkURL.supportedBaudRates.contains(baud), "serial \(path) \(baud)")
        case .tcp(let host, let port):
            fuzzCheck(!host.isEmpty && (1...65535).contains(port), "tcp \(host) \(port)")
        case .stdout, .sim:
            break
        }
    } catch {
        fuzzCheck(error.description.hasPrefix("invalid link"), "error \(error)")
    }
    return 0
}
