import DriveCore
import XCTest

/// The encoder spells a frame on the stack; its bytes must be `frame.text` and the terminator for every
/// field value an `Int` can hold, not only the protocol's ranges.
final class FrameEncoderTests: XCTestCase {
    func testBytesAreTheTextAndTheTerminatorForEveryValue() {
        var values = [0, 1, -1, 2, -2, 9, 10, -10, 99, 100, 230, 240, 999, 1000, -1000, 123_456_789,
                      Int.max, Int.min, Int.max - 1, Int.min + 1]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 { values.append(Int.random(in: Int.min...Int.max, using: &generator)) }
        for _ in 0..<100 { values.append(Int.random(in: -1_000...1_000, using: &generator)) }
        let terminators: [(FrameTerminator, String)] = [(.lineFeed, "\n"), (.carriageReturnLineFeed, "\r\n"), (.none, "")]
        for (index, value) in values.enumerated() {
            let other = values[(index * 7 + 3) % values.count]
            for kind in Frame.Kind.allCases {
                let frame = Frame(kind: kind, range: value, speed: other, direction: 0 &- value)
                for (terminator, end) in terminators {
                    var bytes: [UInt8] = [0x41]  // appended after what is there
                    let count = FrameEncoder(terminator: terminator).encode(frame, into: &bytes)
                    XCTAssertEqual(bytes, [0x41] + Array((frame.text + end).utf8), "\(frame.text)")
                    XCTAssertEqual(count, bytes.count - 1)
                }
            }
        }
    }
}
