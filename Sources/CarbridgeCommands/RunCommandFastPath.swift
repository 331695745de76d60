import ArgumentParser
import DriveConfig
import Logging

/// Reads a plain `carbridge run …` command line without argument-parser, or declines it.
///
/// Why: argument-parser learns a command's options at run time, by reflecting on the command's
/// property wrappers (`Mirror`, dynamic casts, generic metadata), and in the static program every
/// first conformance lookup scans all of its ~4,000 conformance records. One parse of `run` was 12.0
/// of the 14.8 million instructions from exec to `connect(2)` (callgrind, issue 17), and 58 ms of a
/// start in the QEMU guest (docs/performance.md, "Start-up, sixth pass").
///
/// What it accepts it reads exactly as argument-parser does, into the same `RunInvocation`
/// (`RunCommandFastPathTests` puts the two side by side): `run` followed by `run`'s own options, each
/// at most once, as `--name value`, `--name=value` or `-c value`. Anything else is declined (nil) and
/// goes to argument-parser, which stays the one definition of the command line: help, `--version`,
/// completion requests, every usage error and its message, an unknown or repeated option, a value
/// that starts with `-` or is empty, a value its option refuses.
enum RunCommandFastPath {
    /// The run `arguments` (the command line without the program name) ask for, or nil when
    /// argument-parser must read them.
    static func parse(_ arguments: [String]) -> RunInvocation? {
        guard arguments.first == "run" else { return nil }
        var invocation = RunInvocation()
        var overrides = [ConfigOverride?](repeating: nil, count: RunConfigFlag.allCases.count)
        var seen: UInt32 = 0
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            var name = Substring(argument)
            var attached: Substring?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = argument[..<equals]
                attached = argument[argument.index(after: equals)...]
            }
            guard let option = Option(name) else { return nil }
            // Given before (`-c` and `--config` are one option): argument-parser decides which wins.
            guard seen & option.bit == 0 else { return nil }
            seen |= option.bit
            // The option's value: attached (`--name=value`) or the next argument; nil when it is missing, empty
            // or looks like an option (argument-parser says which).
            func takeValue() -> String? {
                let value: String
                if let attached {
                    value = String(attached)
                } else {
                    guard index < arguments.count else { return nil }
                    value = arguments[index]
                    index += 1
                }
                return value.isEmpty || value.hasPrefix("-") ? nil : value
            }
            switch option {
            case .noKeyboard, .noView:
                guard attached == nil else { return nil }
                if option == .noKeyboard { invocation.keyboard = false } else { invocation.view = false }
            case .config:
                guard let value = takeValue(), CommonOptions.configProblem(value) == nil else { return nil }
                invocation.configPath = value
            case .logLevel:
                guard let value = takeValue(), let level = Logger.Level(argument: value) else { return nil }
                invocation.logLevel = level
            case .replay:
                guard let value = takeValue() else { return nil }
                invocation.replay = value
            case .configFlag(let flag):
                guard let value = takeValue(), let override = try? flag.parse(value) else { return nil }
                overrides[flag.rawValue] = override
            }
        }
        // `RunConfigFlag`'s order, which `RunCommand.invocation` keeps too.
        invocation.overrides = overrides.compactMap { $0 }
        return invocation
    }

    /// One of `run`'s options.
    enum Option: Equatable {
        /// A flag that overrides a config key.
        case configFlag(RunConfigFlag)
        case config, logLevel, noKeyboard, noView, replay

        /// Every name the fast path reads, as argument-parser derives it from `RunCommand`.
        static let names: [(name: String, option: Option)] = [
            ("--link", .configFlag(.link)), ("--max-speed", .configFlag(.maxSpeed)), ("--period-ms", .configFlag(.periodMs)),
            ("--idle-timeout", .configFlag(.idleTimeout)), ("--terminator", .configFlag(.terminator)),
            ("--dashboard", .configFlag(.dashboard)), ("-c", .config), ("--config", .config), ("--log-level", .logLevel),
            ("--no-keyboard", .noKeyboard), ("--no-view", .noView), ("--replay", .replay),
        ]

        /// The option a command-line word names.
        init?(_ word: Substring) {
            guard let entry = Self.names.first(where: { $0.name == word }) else { return nil }
            self = entry.option
        }

        /// The option's bit in a set of options: a config flag's raw value, the others above them.
        var bit: UInt32 {
            switch self {
            case .configFlag(let flag): 1 << UInt32(flag.rawValue)
            case .config: 1 << 16
            case .logLevel: 1 << 17
            case .noKeyboard: 1 << 18
            case .noView: 1 << 19
            case .replay: 1 << 20
            }
        }
    }
}
