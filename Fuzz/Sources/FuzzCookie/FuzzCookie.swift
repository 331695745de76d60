// The `Cookie` header of a WebSocket upgrade: CookieHeader.value(of:in:). A value found is a piece of the
// header right after `name=` at the start of a cookie, running to the next `;` or the end and never holding
// one; a cookie the server set comes back byte for byte among others.
import DriveWebProtocol
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookie(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    // "name\nheader", or all of it as the header with the dashboard's own cookie name.
    let (name, header) = splitAtNewline(bytes).map { (String(decoding: $0.head, as: UTF8.self), String(decoding: $0.tail, as: UTF8.self)) }
        ?? ("carbridge_session", String(decoding: bytes, as: UTF8.self))
    let headerBytes = Array(header.utf8)

    for wanted in [name, "carbridge_session"] {
        guard let value = CookieHeader.value(of: wanted, in: header) else { continue }
        let valueBytes = Array(value.utf8)
        fuzzCheck(!valueBytes.contains(UInt8(ascii: ";")), "\(header.debugDescription): \(wanted) = \(value.debugDescription) holds a ;")
        // `name=value` then `;` or the end, after the start or a `;` and blanks.
        let pair = Array(wanted.utf8) + [UInt8(ascii: "=")] + valueBytes
        var found = false
        for start in 0...max(0, headerBytes.count - pair.count) where start + pair.count <= headerBytes.count {
            guard headerBytes[start..<(start + pair.count)].elementsEqual(pair) else { continue }
            let end = start + pair.count
            guard end == headerBytes.count || headerBytes[end] == UInt8(ascii: ";") else { continue }
            var before = start
            while before > 0, headerBytes[before - 1] == UInt8(ascii: " ") || headerBytes[before - 1] == UInt8(ascii: "\t") { before -= 1 }
            if before == 0 || headerBytes[before - 1] == UInt8(ascii: ";") { found = true; break }
        }
        fuzzCheck(found, "\(header.debugDescription): \(wanted) = \(value.debugDescription) is not a cookie of the header")
    }

    // Round trip: a well-formed name and value among other cookies, as a browser sends them.
    let nameBytes = Array(name.utf8)
    let isToken = { (byte: UInt8) in byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ";") && byte != UInt8(ascii: "=") }
    let value = String(decoding: headerBytes.filter(isToken), as: UTF8.self)
    if !nameBytes.isEmpty, nameBytes.allSatisfy(isToken) {
        for sent in ["\(name)=\(value)", "\(name)_=1; \(name)=\(value); _\(name)=2", "\(name)x=0; x\(name)=0;\t\(name)=\(value)", "\(name)=\(value); \(name)=later"] {
            let found = CookieHeader.value(of: name, in: sent)
            fuzzCheck(found.map { Array($0.utf8) } == Array(value.utf8), "\(sent.debugDescription): \(String(describing: found)), not \(value.debugDescription)")
        }
    }
    return 0
}
