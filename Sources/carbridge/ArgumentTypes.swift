import ArgumentParser
import Logging

// Flag values parsed by argument-parser itself: a bad value is a usage error naming the flag
// (exit status 64), and `--help` and shell completion list the values.

extension Logger.Level: @retroactive ExpressibleByArgument {}
