/// Turns frames into the bytes the car reads.
public struct FrameEncoder: Hashable, Sendable {
    /// What follows each frame.
    public var terminator: FrameTerminator

    /// Creates an encoder; the default terminator is `\n`.
    public init(terminator: FrameTerminator = .lineFeed) { self.terminator = terminator }

    /// The frame's bytes, terminator included.
    public func encode(_ frame: Frame) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        encode(frame, into: &bytes)
        return bytes
    }

    /// Appends the frame's bytes, terminator included, to `bytes` (no allocation when `bytes` has room);
    /// returns how many were appended. The same bytes as `frame.text` followed by the terminator.
    @discardableResult
    public func encode(_ frame: Frame, into bytes: inout [UInt8]) -> Int {
        let start = bytes.count
        bytes.append(frame.kind.asciiByte)
        bytes.append(UInt8(ascii: ","))
        Self.appendDecimal(frame.range, to: &bytes)
        bytes.append(UInt8(ascii: ","))
        Self.appendDecimal(frame.speed, to: &bytes)
        bytes.append(UInt8(ascii: ","))
        Self.appendDecimal(frame.direction, to: &bytes)
        switch terminator {
        case .lineFeed: bytes.append(UInt8(ascii: "\n"))
        case .carriageReturnLineFeed:
            bytes.append(UInt8(ascii: "\r"))
            bytes.append(UInt8(ascii: "\n"))
        case .none: break
        }
        return bytes.count - start
    }

    /// `value` in decimal as `String(value)` spells it (a `-` sign, no `+`, no leading zeros).
    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude))
            return
        }
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor &*= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }
}
