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
        withBytes(of: frame) { encoded in
            bytes.append(contentsOf: encoded.bindMemory(to: UInt8.self))
            return encoded.count
        }
    }

    /// Calls `body` with the frame's bytes, terminator included, spelled on the stack (valid only during
    /// the call): what a link writes when nothing waits before the frame, without queueing it. Inlinable, so
    /// that it is specialized for its caller.
    @inlinable
    public func withBytes<Result>(of frame: Frame, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumLength) { buffer in
            let count = spell(frame, at: buffer.baseAddress!)
            return try body(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: count))
        }
    }

    /// Writes the frame's bytes at `out` (room for `maximumLength`); returns how many.
    @usableFromInline
    func spell(_ frame: Frame, at out: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        out[count] = frame.kind.asciiByte
        out[count + 1] = UInt8(ascii: ",")
        count += 2
        count += Self.spell(frame.range, at: out + count)
        out[count] = UInt8(ascii: ",")
        count += 1
        count += Self.spell(frame.speed, at: out + count)
        out[count] = UInt8(ascii: ",")
        count += 1
        count += Self.spell(frame.direction, at: out + count)
        switch terminator {
        case .lineFeed:
            out[count] = UInt8(ascii: "\n")
            count += 1
        case .carriageReturnLineFeed:
            out[count] = UInt8(ascii: "\r")
            out[count + 1] = UInt8(ascii: "\n")
            count += 2
        case .none: break
        }
        return count
    }

    /// The longest frame: a letter, three commas, three `Int`s of up to 20 characters (`Int.min`) and CR LF.
    @usableFromInline
    static let maximumLength = 1 + 3 + 3 * 20 + 2

    /// Writes `value` in decimal as `String(value)` spells it (a `-` sign, no `+`, no leading zeros) at
    /// `out`; returns how many bytes (at most 20).
    static func spell(_ value: Int, at out: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            count = 1
        }
        var magnitude = value.magnitude
        if magnitude < 10 {
            out[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
            return count + 1
        }
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var index = count + digits
        while index > count {
            index -= 1
            out[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        }
        return count + digits
    }
}
