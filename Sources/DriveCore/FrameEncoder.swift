/// Turns frames into the bytes the car reads.
public struct FrameEncoder: Hashable, Sendable {
    /// What follows each frame.
    public var terminator: FrameTerminator

    /// Creates an encoder; the default terminator is `\n`.
    public init(terminator: FrameTerminator = .lineFeed) { self.terminator = terminator }

    /// The frame's bytes, terminator included.
    public func encode(_ frame: Frame) -> [UInt8] {
        Array(frame.text.utf8) + terminator.bytes
    }
}
