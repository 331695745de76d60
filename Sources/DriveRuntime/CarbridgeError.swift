/// A problem the user can act on, as one message (`carbridge: <message>` on stderr, exit status 1):
/// no accelerometer, a missing recording, udev that cannot be watched, a file that cannot be written, a
/// Bluetooth scan or pairing that failed. The one type for such a sentence, in the sessions and the commands.
public struct CarbridgeError: Error, CustomStringConvertible, Equatable {
    /// The sentence.
    public let message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    /// The sentence as it is.
    public var description: String { message }
}
