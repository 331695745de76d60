// The login form's body (POST /login): URLEncodedForm.value(of:inForm:) and percentDecoded. Decoding never
// makes more bytes than it read; a value found is the decoding of one pair's value; a name and value
// encoded as a browser encodes them come back byte for byte; the form read as a query gives the same
// (when it has no `+`: only a form's is a space).
import DriveWebProtocol
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLoginForm(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)

    let decoded = URLEncodedForm.percentDecoded(text)
    fuzzCheck(decoded.utf8.count <= text.utf8.count, "\(text.debugDescription) decodes to more bytes: \(decoded.debugDescription)")
    if !text.utf8.contains(UInt8(ascii: "%")) {
        // Without escapes only `+` changes.
        let plain = String(decoding: text.utf8.map { $0 == UInt8(ascii: "+") ? 0x20 : $0 }, as: UTF8.self)
        fuzzCheck(Array(decoded.utf8) == Array(plain.utf8), "\(text.debugDescription) → \(decoded.debugDescription)")
    }

    for name in ["token", "x", ""] {
        let value = URLEncodedForm.value(of: name, inForm: text)
        if let value {
            fuzzCheck(value.utf8.count <= text.utf8.count, "\(text.debugDescription): \(name) is longer than the form")
            // The value is the decoding of the text after the `=` of some pair (or empty, with no `=`).
            let pairs = text.utf8.split(separator: UInt8(ascii: "&")).map { String(decoding: $0, as: UTF8.self) }
            let sources = pairs.compactMap { pair -> String? in
                let parts = pair.utf8.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                guard Array(URLEncodedForm.percentDecoded(String(decoding: parts[0], as: UTF8.self)).utf8) == Array(name.utf8) else {
                    return nil
                }
                return parts.count == 2 ? String(decoding: parts[1], as: UTF8.self) : ""
            }
            fuzzCheck(!sources.isEmpty, "\(text.debugDescription): \(name) = \(value.debugDescription) is in no pair")
            if let first = sources.first {
                let expected = URLEncodedForm.percentDecoded(first)
                fuzzCheck(Array(expected.utf8) == Array(value.utf8), "\(text.debugDescription): \(name) = \(value.debugDescription), the first pair says \(expected.debugDescription)")
            }
        }
        if !text.utf8.contains(UInt8(ascii: "#")) && !text.utf8.contains(UInt8(ascii: "+")) {
            let asQuery = URLEncodedForm.value(of: name, inQuery: "/?" + text)
            fuzzCheck(asQuery.map { Array($0.utf8) } == value.map { Array($0.utf8) }, "\(text.debugDescription): form \(String(describing: value)), query \(String(describing: asQuery))")
        }
    }

    // Round trip: the input as "name\nvalue" (or all of it as the token), encoded as a browser does.
    let (name, value) = splitAtNewline(bytes).map { (String(decoding: $0.head, as: UTF8.self), String(decoding: $0.tail, as: UTF8.self)) }
        ?? ("token", text)
    let encodedValue = formEncoded(value.utf8)
    let back = URLEncodedForm.percentDecoded(encodedValue)
    fuzzCheck(Array(back.utf8) == Array(value.utf8), "\(value.debugDescription) → \(encodedValue) → \(back.debugDescription)")
    let form = formEncoded(name.utf8) + "=" + encodedValue + "&token=other&x=1"
    let found = URLEncodedForm.value(of: name, inForm: form)
    fuzzCheck(found.map { Array($0.utf8) } == Array(value.utf8), "\(form.debugDescription): \(name.debugDescription) = \(String(describing: found)), not \(value.debugDescription)")
    return 0
}
