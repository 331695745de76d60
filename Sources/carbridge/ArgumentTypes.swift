import ArgumentParser
import DriveConfig
import DriveCore
import DriveLink
import Logging

// Flag values parsed by argument-parser itself: a bad value is a usage error naming the flag
// (exit status 64), and `--help` and shell completion list the values.

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension FrameTerminator: ExpressibleByArgument {
    /// `lf`, `crlf` or `none` (also `\n` and `\r\n`, as in config files).
    public init?(argument: String) { self.init(name: argument) }
    public var defaultValueDescription: String { name }
    public static var allValueStrings: [String] { allCases.map(\.name) }
    public static var allValueDescriptions: [String: String] {
        ["lf": "\\n after each frame (the default)", "crlf": "\\r\\n after each frame", "none": "nothing between frames"]
    }
}

/// `--link URL`: the text as given (it overrides `[link] url`) once `LinkURL` has parsed it.
struct LinkArgument {
    let text: String
    let url: LinkURL

    /// Parses `text`; an invalid URL is a usage error that names `--link` and says what is wrong
    /// (`LinkURLError`'s message: the problem and the accepted forms).
    static func parse(_ text: String) throws -> LinkArgument {
        do {
            return LinkArgument(text: text, url: try LinkURL(parsing: text))
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

/// `--dashboard HOST:PORT`: a usage error naming the flag when it does not parse.
enum DashboardArgument {
    static func parse(_ text: String) throws -> ListenAddress {
        do {
            return try ListenAddress(parsing: text)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
