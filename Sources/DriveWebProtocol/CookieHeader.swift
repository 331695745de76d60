/// Reads a `Cookie` request header (`a=b; c=d`, RFC 6265 §5.4).
public enum CookieHeader {
    /// The value of cookie `name` in `header`, if present: the bytes after `name=` up to the next `;`.
    ///
    /// Read as bytes, like `URLEncodedForm`: a `;` that a combining mark follows is one `Character` with it,
    /// which splitting the `String` would not split at.
    public static func value(of name: String, in header: String?) -> String? {
        guard let header else { return nil }
        let wanted = Array(name.utf8)
        for part in header.utf8.split(separator: UInt8(ascii: ";")) {
            let pair = part.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
            if pair[..<equals].elementsEqual(wanted) {
                return String(decoding: pair[pair.index(after: equals)...], as: UTF8.self)
            }
        }
        return nil
    }
}
