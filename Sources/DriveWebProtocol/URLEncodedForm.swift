/// Reads `application/x-www-form-urlencoded` text as browsers write it: the login form's body and the query
/// of a request's target (`/join?code=…`, `/?token=…`).
///
/// The WHATWG URL standard's rules: `&`-separated `name=value` pairs (a pair without `=` has an empty
/// value), `%XX` for any byte in both name and value, and in a form body `+` for a space; a `%` not followed
/// by two hex digits stays as it is, and decoded bytes that are not UTF-8 become U+FFFD. The first pair with
/// the name wins. A query keeps its `+` (as Hummingbird's query parameters did): people type `/?token=…` by
/// hand, a token may hold one (base64), and no page of the dashboard submits a form by GET.
///
/// Everything is read as bytes: splitting a `String` by `Character` would not split at a `&` or `=` that a
/// combining mark follows (one grapheme cluster with it), and would match names only canonically equal.
public enum URLEncodedForm {
    /// The decoded value of the first pair named `name` in `form` (a form body), or nil when there is none.
    public static func value(of name: String, inForm form: String) -> String? {
        value(of: name, inPairs: form.utf8[...], plusIsSpace: true)
    }

    /// The decoded value of `name` in the query of a request target (`/join?code=…`: the part after the first
    /// `?` and before a `#`; a `?` after the `#` is the fragment's), or nil when the target has no query or the
    /// query no such pair.
    public static func value(of name: String, inQuery target: String) -> String? {
        var bytes = target.utf8[...]
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { bytes = bytes[..<hash] }
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return value(of: name, inPairs: bytes[bytes.index(after: question)...], plusIsSpace: false)
    }

    /// `text` with each `%XX` as its byte (a `%` without two hex digits after it kept) and, unless
    /// `plusIsSpace` is false (a query), `+` as a space.
    public static func percentDecoded(_ text: String, plusIsSpace: Bool = true) -> String {
        String(decoding: decodedBytes(text.utf8[...], plusIsSpace: plusIsSpace), as: UTF8.self)
    }

    private static func value(of name: String, inPairs pairs: Substring.UTF8View, plusIsSpace: Bool) -> String? {
        let wanted = Array(name.utf8)
        for pair in pairs.split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard decodedBytes(pair[..<equals], plusIsSpace: plusIsSpace) == wanted else { continue }
            guard equals < pair.endIndex else { return "" }
            return String(decoding: decodedBytes(pair[pair.index(after: equals)...], plusIsSpace: plusIsSpace), as: UTF8.self)
        }
        return nil
    }

    private static func decodedBytes(_ text: Substring.UTF8View, plusIsSpace: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            text.formIndex(after: &index)
            if byte == UInt8(ascii: "+") && plusIsSpace {
                bytes.append(0x20)
            } else if byte == UInt8(ascii: "%"), index < text.endIndex, let high = hexValue(text[index]),
                text.index(after: index) < text.endIndex, let low = hexValue(text[text.index(after: index)])
            {
                bytes.append(high << 4 | low)
                index = text.index(index, offsetBy: 2)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// The value of one hex digit (either case), or nil. Not `UInt8(_:radix:)`: that also takes a sign.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
