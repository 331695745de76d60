/// A link URL that could not be parsed: what is wrong, and the forms that are accepted.
public struct LinkURLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text that was given.
    public var url: String
    /// What is wrong with it.
    public var problem: String

    /// Creates an error for `url` saying `problem`.
    public init(url: String, problem: String) {
        self.url = url
        self.problem = problem
    }

    public var description: String {
        "invalid link \"\(url)\": \(problem); use \(LinkURL.acceptedForms)"
    }
}
