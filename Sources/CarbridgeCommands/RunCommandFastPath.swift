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
        var overrides = [ConfigOverride?](repeating: nil, count: Option.overridingCount)
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
            switch option {
            case .noKeyboard, .noView:
                guard attached == nil else { return nil }
                if option == .noKeyboard { invocation.keyboard = false } else { invocation.view = false }
                continue
            default:
                break
            }
            let value: String
            if let attached {
                value = String(attached)
            } else {
                guard index < arguments.count else { return nil }
                value = arguments[index]
                index += 1
            }
            guard !value.isEmpty, !value.hasPrefix("-") else { return nil }
            switch option {
            case .config:
                guard CommonOptions.configProblem(value) == nil else { return nil }
                invocation.configPath = value
            case .logLevel:
                guard let level = Logger.Level(argument: value) else { return nil }
                invocation.logLevel = level
            case .replay:
                invocation.replay = value
            default:
                guard let override = option.override(value) else { return nil }
                overrides[option.rawValue] = override
            }
        }
        // `RunCommand.invocation`'s order.
        invocation.overrides = overrides.compactMap { $0 }
        return invocation
    }

    /// One of `run`'s options; those that override a config key first, in `RunCommand`'s order.
    enum Option: Int {
        case link, maxSpeed, periodMs, idleTimeout, terminator, dashboard
        case config, logLevel, noKeyboard, noView, replay

        /// How many options override a config key.
        static let overridingCount = 6

        /// Every name the fast path reads, as argument-parser derives it from `RunCommand`.
        static let names: [(name: String, option: Option)] = [
            ("--link", .link), ("--max-speed", .maxSpeed), ("--period-ms", .periodMs), ("--idle-timeout", .idleTimeout),
            ("--terminator", .terminator), ("--dashboard", .dashboard), ("-c", .config), ("--config", .config),
            ("--log-level", .logLevel), ("--no-keyboard", .noKeyboard), ("--no-view", .noView), ("--replay", .replay),
        ]

        /// The option a command-line word names.
        init?(_ word: Substring) {
            guard let entry = Self.names.first(where: { $0.name == word }) else { return nil }
            self = entry.option
        }

        /// The option's bit in a set of options.
        var bit: UInt32 { 1 << UInt32(rawValue) }

        /// The override for `value`, for an option that overrides a config key; read with the key's
        /// declaration, as `RunCommand`'s `transform:` reads it. Nil when the value is not valid (argument-parser says why).
        func override(_ value: String) -> ConfigOverride? {
            switch self {
            case .link: try? ConfigFlag.parser(ConfigKeys.url)(value)
            case .maxSpeed: try? ConfigFlag.parser(ConfigKeys.maxSpeed)(value)
            case .periodMs: try? ConfigFlag.parser(ConfigKeys.period)(value)
            case .idleTimeout: try? ConfigFlag.parser(ConfigKeys.idleTimeout)(value)
            case .terminator: try? ConfigFlag.parser(ConfigKeys.terminator)(value)
            case .dashboard: try? ConfigFlag.parser(ConfigKeys.listen)(value)
            case .config, .logLevel, .noKeyboard, .noView, .replay: nil
            }
        }
    }
}
