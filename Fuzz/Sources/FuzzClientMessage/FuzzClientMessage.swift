// The dashboard's WebSocket messages: ClientMessage.parse. A rejection has a reason; an accepted message
// came in within the size limit, holds only values in the documented ranges, and its canonical spelling
// (what the pages' JSON.stringify would send for it) parses back to the same message.
import DriveCore
import DriveWebProtocol
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let message: ClientMessage
    do {
        message = try ClientMessage.parse(text)
    } catch {
        fuzzCheck(!error.reason.isEmpty, "\(text.debugDescription): a rejection without a reason")
        // The reason goes back to the browser: it may quote the message, never grow past it by much.
        fuzzCheck(error.reason.utf8.count <= ClientMessage.maximumBytes + 160, "\(text.debugDescription): reason \(error.reason.utf8.count) bytes")
        return 0
    }
    fuzzCheck(text.utf8.count <= ClientMessage.maximumBytes, "accepted \(text.utf8.count) bytes")
    checkBounds(message, text)
    let canonical = spelling(of: message)
    fuzzCheck(canonical.utf8.count <= ClientMessage.maximumBytes, "\(message) spelt in \(canonical.utf8.count) bytes")
    do {
        let again = try ClientMessage.parse(canonical)
        fuzzCheck(again == message, "\(text.debugDescription) → \(canonical) → \(again)")
    } catch {
        fuzzCheck(false, "\(text.debugDescription) → \(canonical) is rejected: \(error)")
    }
    return 0
}

private func finite(_ value: Double, within range: ClosedRange<Double>) -> Bool {
    value.isFinite && range.contains(value)
}

private func checkBounds(_ message: ClientMessage, _ text: String) {
    switch message {
    case .control(let control):
        switch control {
        case .engine, .speedUp, .speedDown, .gear:
            break
        case .function(let n):
            fuzzCheck((1...5).contains(n), "\(text.debugDescription): F\(n)")
        case .steer(let degrees):
            fuzzCheck(finite(degrees, within: -90...90), "\(text.debugDescription): steer \(degrees)")
        default:
            // Safety events and speeds are the server's own: a browser can never name one.
            fuzzCheck(false, "\(text.debugDescription): a browser sent \(control)")
        }
    case .tilt(let reading):
        fuzzCheck(finite(reading.beta, within: -180...180), "\(text.debugDescription): beta \(reading.beta)")
        fuzzCheck(finite(reading.gamma, within: -90...90), "\(text.debugDescription): gamma \(reading.gamma)")
        fuzzCheck([0, 90, 180, 270, -90].contains(reading.screenAngle), "\(text.debugDescription): angle \(reading.screenAngle)")
        fuzzCheck(reading.sequence >= 0 && Double(reading.sequence) <= ClientMessage.maximumSequence, "\(text.debugDescription): seq \(reading.sequence)")
    case .stick(let reading):
        fuzzCheck(finite(reading.x, within: -1...1) && finite(reading.y, within: -1...1), "\(text.debugDescription): stick \(reading)")
    case .bluetoothPick(let address):
        fuzzCheck(ClientMessage.bluetoothAddress(address) == address && address == address.uppercased(), "\(text.debugDescription): address \(address)")
    case .ping, .bluetoothScan, .straight, .release:
        break
    }
}

/// The message as the pages send it (JSON.stringify of the object, keys in the pages' order).
private func spelling(of message: ClientMessage) -> String {
    func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
    switch message {
    case .control(.engine): return #"{"c":"engine"}"#
    case .control(.speedUp): return #"{"c":"speed_up"}"#
    case .control(.speedDown): return #"{"c":"speed_down"}"#
    case .control(.gear): return #"{"c":"gear"}"#
    case .control(.function(let n)): return #"{"c":"f","n":\#(n)}"#
    case .control(.steer(let degrees)): return #"{"c":"steer","deg":\#(number(degrees))}"#
    case .control(let other): return "unspellable \(other)"
    case .ping: return #"{"c":"ping"}"#
    case .bluetoothScan: return #"{"c":"bt_scan"}"#
    case .bluetoothPick(let address): return #"{"c":"bt_pick","addr":"\#(address)"}"#
    case .straight: return #"{"c":"straight"}"#
    case .release: return #"{"c":"release"}"#
    case .tilt(let r):
        return #"{"c":"tilt","beta":\#(number(r.beta)),"gamma":\#(number(r.gamma)),"angle":\#(r.screenAngle),"hold":"\#(r.hold.rawValue)","seq":\#(r.sequence)}"#
    case .stick(let r):
        return #"{"c":"stick","x":\#(number(r.x)),"y":\#(number(r.y)),"form":"\#(r.form.rawValue)"}"#
    }
}
