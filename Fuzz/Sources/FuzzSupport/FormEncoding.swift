/// `bytes` percent-encoded as a browser's form would send them: the unreserved bytes as they are, a space as
/// `+` (as `%20` when `spaceAsPlus` is false: a query), every other byte as `%XX` (upper-case hex). The
/// targets' own encoder, to check the decoder against.
public func formEncoded(_ bytes: some Sequence<UInt8>, spaceAsPlus: Bool = true) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "*"):
            out.append(byte)
        case UInt8(ascii: " ") where spaceAsPlus:
            out.append(UInt8(ascii: "+"))
        default:
            out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// Whether `needle`'s bytes occur in `haystack`'s.
public func containsBytes(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    if needle.isEmpty { return true }
    guard needle.count <= haystack.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return true
    }
    return false
}

/// `bytes` split at the first newline: (before, after), or nil when there is none.
public func splitAtNewline(_ bytes: [UInt8]) -> (head: [UInt8], tail: [UInt8])? {
    guard let newline = bytes.firstIndex(of: 0x0A) else { return nil }
    return (Array(bytes[..<newline]), Array(bytes[(newline + 1)...]))
}
