import Glibc

/// Stops the fuzzer with a crash (SIGABRT, which libFuzzer reports and saves the input for) when an
/// invariant does not hold.
public func fuzzCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if condition() { return }
    fputs("fuzz invariant failed at \(file):\(line): \(message())\n", stderr)
    abort()
}

/// The bytes libFuzzer hands to `LLVMFuzzerTestOneInput`.
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// `bytes` cut into consecutive pieces whose sizes (1…32) come deterministically from the bytes
/// themselves, so the same input always splits the same way: for checking that feeding a stream in
/// pieces gives what feeding it whole gives.
public func fuzzChunks(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    var state = UInt32(truncatingIfNeeded: bytes.count) &* 2_654_435_761 &+ UInt32(bytes.first ?? 0)
    let largest = UInt32((bytes.last ?? 0) % 32) + 1
    var chunks: [ArraySlice<UInt8>] = []
    var start = 0
    while start < bytes.count {
        state = state &* 1_103_515_245 &+ 12_345
        let length = Int((state >> 16) % largest) + 1
        let end = min(bytes.count, start + length)
        chunks.append(bytes[start..<end])
        start = end
    }
    return chunks
}
