/// The frames one `DriveMachine` step returns: at most two (a stream frame and the idle timeout's
/// `E,0,0,0`), stored inline so the hot path allocates nothing (an `[Frame]` would be a heap
/// allocation per control). A random-access collection of `Frame`s; compares equal to an array literal.
public struct FrameBatch: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// How many frames a batch holds at most.
    public static let capacity = 2

    private var first: Frame?
    private var second: Frame?

    /// An empty batch.
    public init() {}

    /// A batch of `frames` (at most `capacity`).
    public init(arrayLiteral frames: Frame...) {
        for frame in frames { append(frame) }
    }

    /// Appends `frame`; a batch is never asked for more than `capacity` frames.
    public mutating func append(_ frame: Frame) {
        if first == nil {
            first = frame
        } else {
            precondition(second == nil, "FrameBatch holds at most \(Self.capacity) frames")
            second = frame
        }
    }

    /// Empties the batch.
    public mutating func removeAll() {
        first = nil
        second = nil
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { first == nil ? 0 : (second == nil ? 1 : 2) }

    public subscript(position: Int) -> Frame {
        switch position {
        case 0: return first!
        case 1 where second != nil: return second!
        default: preconditionFailure("FrameBatch index \(position) out of range")
        }
    }

    public var description: String { "[" + map(\.text).joined(separator: ", ") + "]" }
}
