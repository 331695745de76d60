import Glibc

/// `printf`-style formatting of one number through `vsnprintf` (what `String(format:)` did, without Foundation).
enum CFormat {
    /// `value` formatted with a C format taking one double, e.g. `"%8.3f"`.
    static func double(_ format: String, _ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = withVaList([value]) { arguments in
            buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
        }
        guard count >= 0 else { return "\(value)" }
        if Int(count) >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(count) + 1)
            _ = withVaList([value]) { arguments in
                buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
            }
        }
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
