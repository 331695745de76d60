import ArgumentParser
import DriveConfig
import DriveInput
import XCTest

@testable import CarbridgeCommands

/// `RunCommandFastPath` against argument-parser: what the fast path accepts it must read exactly as
/// argument-parser reads it, and what it cannot read it must leave to argument-parser.
final class RunCommandFastPathTests: XCTestCase {
    /// Command lines the fast path reads: every option of `run`, both spellings of a value, `-c`.
    static let accepted: [[String]] = [
        ["run"],
        ["run", "--config", "/etc/carbridge/carbridge.toml", "--no-keyboard"],
        ["run", "-c", "car.toml", "--no-keyboard", "--no-view"],
        ["run", "--config=car.toml", "--log-level", "debug"],
        ["run", "--log-level=trace", "--no-view"],
        ["run", "--link", "tcp://127.0.0.1:7000", "--max-speed", "60", "--period-ms", "120"],
        ["run", "--link=rfcomm://98:D3:31:F5:2A:11", "--max-speed=100"],
        ["run", "--idle-timeout", "30", "--terminator", "crlf"],
        ["run", "--idle-timeout=0", "--terminator=none", "--period-ms=250"],
        ["run", "--replay", "pad.evemu", "--no-keyboard", "--no-view", "--link", "serial:///dev/rfcomm0"],
        ["run", "--dashboard", "127.0.0.1:8080"],
        ["run", "--dashboard=[::1]:9000", "--log-level", "error", "--link", "tcp://[::1]:7000"],
        ["run", "--no-view", "--no-keyboard", "--replay=a=b.evemu", "-c", "a b.toml"],
        ["run", "--max-speed", "10", "--period-ms", "40"],
    ]

    /// Command lines the fast path must leave to argument-parser, which reports each as a usage error.
    static let usageErrors: [[String]] = [
        ["run", "--bogus"],
        ["run", "--link"],
        ["run", "--link", "--no-view"],
        ["run", "--link", "ftp://x"],
        ["run", "--max-speed", "500"],
        ["run", "--max-speed", "0"],
        ["run", "--max-speed", "-5"],
        ["run", "--max-speed=fast"],
        ["run", "--period-ms", ""],
        ["run", "--log-level", "loud"],
        ["run", "--terminator", "cr"],
        ["run", "--config", ""],
        ["run", "--config", " "],
        ["run", "-c"],
        ["run", "-cfile.toml"],
        ["run", "--no-view=true"],
        ["run", "extra"],
        ["run", "--replay"],
        ["run", "--dashboard", "nowhere"],
        ["run", "-x"],
        ["--config", "a.toml", "run"],
    ]

    /// Command lines the fast path leaves to argument-parser that are not errors (help, completions,
    /// an option given twice, other commands).
    static let declinedOthers: [[String]] = [
        [], ["--help"], ["--version"], ["help", "run"], ["run", "--help"], ["run", "-h"],
        ["run", "--generate-completion-script", "bash"], ["---completion", "run", "--", "--link", "0", "0"],
        ["run", "--no-view", "--no-view"], ["run", "-c", "a.toml", "--config", "b.toml"],
        ["run", "--max-speed", "10", "--max-speed=20"], ["run", "--", "--no-view"],
        ["check-config", "a.toml"], ["Run"], ["car-sim"],
    ]

    func testWhatTheFastPathReadsIsWhatArgumentParserReads() throws {
        for arguments in Self.accepted {
            let fast = try XCTUnwrap(RunCommandFastPath.parse(arguments), "declined \(arguments)")
            let parsed = try XCTUnwrap(Carbridge.parseAsRoot(arguments) as? RunCommand, "\(arguments)")
            XCTAssertEqual(Self.describe(fast), Self.describe(parsed.invocation), "\(arguments)")
        }
    }

    func testTheComparisonSeesEachValue() throws {
        // The comparison above would pass for a fast path that ignored its input if `describe` missed a
        // field: each accepted command line must differ from plain `run` in what `describe` shows.
        let plain = Self.describe(try XCTUnwrap(RunCommandFastPath.parse(["run"])))
        for arguments in Self.accepted.dropFirst() {
            XCTAssertNotEqual(Self.describe(try XCTUnwrap(RunCommandFastPath.parse(arguments))), plain, "\(arguments)")
        }
        let overridden = try XCTUnwrap(RunCommandFastPath.parse(["run", "--max-speed", "60"]))
        XCTAssertTrue(Self.describe(overridden).contains("maxSpeed: 60"), Self.describe(overridden))
    }

    func testUsageErrorsAreLeftToArgumentParser() {
        for arguments in Self.usageErrors {
            XCTAssertNil(RunCommandFastPath.parse(arguments), "\(arguments)")
            XCTAssertThrowsError(try Carbridge.parseAsRoot(arguments), "argument-parser accepts \(arguments)")
        }
    }

    func testHelpCompletionsRepeatsAndOtherCommandsAreLeftToArgumentParser() {
        for arguments in Self.declinedOthers {
            XCTAssertNil(RunCommandFastPath.parse(arguments), "\(arguments)")
        }
    }

    func testTheFastPathKnowsEveryOptionOfRunAndNoOther() throws {
        // The names argument-parser gives `run`'s options, from the help it generates: a new flag, or a
        // renamed one, must be taught to the fast path (or a renamed one would be read by its old name).
        let help = Carbridge.helpMessage(for: RunCommand.self, columns: 1000)
        let words = help.split(whereSeparator: { " ,.:;=\n[]()<>|'\"`".contains($0) })
        let names = Set(words.filter { word in
            word.hasPrefix("-") && word.dropFirst(word.hasPrefix("--") ? 2 : 1).first?.isLetter == true
        }.map(String.init))
        let fromArgumentParser = names.subtracting(["-h", "--help", "--version"])
        XCTAssertTrue(fromArgumentParser.contains("--link") && fromArgumentParser.contains("-c"), "\(fromArgumentParser)")
        for name in fromArgumentParser {
            XCTAssertNotNil(RunCommandFastPath.Option(Substring(name)), "argument-parser's \(name) is not in the fast path")
        }
        for option in RunCommandFastPath.Option.names.map(\.name) {
            XCTAssertTrue(fromArgumentParser.contains(option), "the fast path's \(option) is not in run's help")
        }
    }

    /// Everything a run depends on in `invocation`, with the overrides applied to the defaults: the
    /// tables `run`'s flags override (the whole config's dump is not stable: a dictionary's order
    /// differs between two equal instances).
    static func describe(_ invocation: RunInvocation) -> String {
        var config = try! CarbridgeConfig.defaults(resolver: EventCodeNames())
        for override in invocation.overrides { override.apply(to: &config) }
        var text = "config: \(invocation.configPath ?? "-"); log: \(invocation.logLevel); keyboard: \(invocation.keyboard); "
            + "view: \(invocation.view); replay: \(invocation.replay ?? "-"); overrides: \(invocation.overrides.map(\.path))\n"
        dump(config.link, to: &text)
        dump(config.drive, to: &text)
        dump(config.dashboard, to: &text)
        return text
    }
}
