// The query of `/join?code=…` and `/?token=…`: URLEncodedForm.value(of:inQuery:). A value found comes from
// the query (after the first `?` before a `#`) and is the decoding of one pair's value, no longer than the
// target; a `+` stays a `+`; a target without `?` has none; a code encoded as a browser encodes it comes
// back byte for byte.
import DriveWebProtocol
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJoinQuery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let target = String(decoding: bytes, as: UTF8.self)
    let utf8 = Array(target.utf8)

    for name in ["code", "token"] {
        let value = URLEncodedForm.value(of: name, inQuery: target)
        let beforeFragment = utf8[..<(utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex)]
        guard let question = beforeFragment.firstIndex(of: UInt8(ascii: "?")) else {
            fuzzCheck(value == nil, "\(target.debugDescription): no query, yet \(name) = \(String(describing: value))")
            continue
        }
        let query = beforeFragment[(question + 1)...]
        let form = String(decoding: query, as: UTF8.self)
        // A query reads as a form whose `+` were escaped.
        let escaped = form.replacingPlus()
        let inForm = URLEncodedForm.value(of: name, inForm: escaped)
        fuzzCheck(value.map { Array($0.utf8) } == inForm.map { Array($0.utf8) }, "\(target.debugDescription): \(name) = \(String(describing: value)), its query says \(String(describing: inForm))")
        guard let value else { continue }
        fuzzCheck(value.utf8.count <= query.count, "\(target.debugDescription): \(name) is longer than the query")
        // Some pair's value decodes to it.
        let decodedValues = query.split(separator: UInt8(ascii: "&")).map { pair -> [UInt8] in
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            return parts.count == 2 ? Array(URLEncodedForm.percentDecoded(String(decoding: parts[1], as: UTF8.self), plusIsSpace: false).utf8) : []
        }
        fuzzCheck(decodedValues.contains(Array(value.utf8)), "\(target.debugDescription): \(name) = \(value.debugDescription) is no pair's value")
        if !query.contains(UInt8(ascii: "%")) {
            // Nothing to decode: the value is a piece of the target as it is.
            fuzzCheck(containsBytes(Array(query), Array(value.utf8)), "\(target.debugDescription): \(value.debugDescription) is not in the query")
        }
    }

    // Round trip: the whole input as a code, as a phone's browser would request it.
    let code = formEncoded(utf8, spaceAsPlus: false)
    for request in ["/join?code=\(code)", "/join?x=1&code=\(code)&code=other#frag", "/?token=\(code)"] {
        let name = request.hasPrefix("/join") ? "code" : "token"
        let found = URLEncodedForm.value(of: name, inQuery: request)
        fuzzCheck(found.map { Array($0.utf8) } == utf8, "\(request.debugDescription): \(String(describing: found)), not \(target.debugDescription)")
    }
    return 0
}

extension String {
    /// This text with every `+` as `%2B`.
    fileprivate func replacingPlus() -> String {
        String(decoding: utf8.flatMap { $0 == UInt8(ascii: "+") ? Array("%2B".utf8) : [$0] }, as: UTF8.self)
    }
}
