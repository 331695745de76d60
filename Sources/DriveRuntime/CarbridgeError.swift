/// A problem the user can act on, as one message (`carbridge: <message>` on stderr, exit status 1):
/// no accelerometer, a missing recording, udev that cannot be watched, a file that cannot be written.
public struct CarbridgeError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
