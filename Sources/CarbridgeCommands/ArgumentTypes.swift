import ArgumentParser
import Logging

// Flag values parsed by argument-parser itself: a bad value is a usage error naming the flag
// (exit status 64), and `--help` and shell completion list the values.

extension Logger.Level: @retroactive ExpressibleByArgument {
    // The values argument-parser's defaults give (the raw values, no descriptions), spelled out for
    // this concrete type instead of through the defaults' generic code, which is instantiated at run time.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
    public static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}
