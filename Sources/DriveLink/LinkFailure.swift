/// A link operation that failed, explained in one sentence that says what to do.
public struct LinkFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The sentence shown to the user.
    public var sentence: String
    /// The errno behind it, when there is one.
    public var errno: Int32?

    /// Creates a failure with its explanation.
    public init(_ sentence: String, errno: Int32? = nil) {
        self.sentence = sentence
        self.errno = errno
    }

    public var description: String { sentence }
}
