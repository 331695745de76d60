import ArgumentParser
import DriveConfig
import DriveRuntime
import DriveSystem
import DriveInput
import Glibc
import Logging

/// Options shared by the commands that read a config file and log.
struct CommonOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp(
        "The config file (TOML).", discussion: "Without it, built-in defaults are used (see config/carbridge.toml).",
        valueName: "file"), completion: .file(extensions: ["toml"]))
    var config: String?

    @Option(name: .long, help: ArgumentHelp(
        "How much to log to stderr.", valueName: "level"))
    var logLevel: Logger.Level = .info

    func validate() throws {
        if let problem = Self.configProblem(config) { throw ValidationError(problem) }
    }

    /// Loads the config file (or the defaults) once: TOML, types, ranges and every evdev name (checked
    /// against libevdev now, not when a device appears). Throws `ConfigErrors`: every problem in the file.
    func loadConfig() throws -> CarbridgeConfig { try Self.loadConfig(path: config) }

    /// A logger writing to `sink` at the chosen level.
    func makeLogger(label: String, sink: LogSink) -> Logger { Self.makeLogger(label: label, sink: sink, level: logLevel) }

    /// Loads the config file at `path`, or the defaults for nil (`loadConfig()`).
    static func loadConfig(path: String?) throws -> CarbridgeConfig {
        guard let path else { return try CarbridgeConfig.defaults(resolver: EventCodeNames()) }
        return try CarbridgeConfig.load(file: path, resolver: EventCodeNames())
    }

    /// A logger writing to `sink` at `level`.
    static func makeLogger(label: String, sink: LogSink, level: Logger.Level) -> Logger {
        Logger(label: label) { ConsoleLogHandler(label: $0, sink: sink, level: level) }
    }

    /// Why argument-parser refuses `path` as `--config` (`validate()`), or nil.
    static func configProblem(_ path: String?) -> String? {
        guard let path, path.unicodeScalars.allSatisfy({ $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }) else {
            return nil
        }
        return "--config: the file name must not be empty (omit --config for the built-in defaults)"
    }
}

/// Writes one line to stdout at once (unbuffered, so pipes and tests see it immediately).
func say(_ line: String) {
    try? Syscall.writeAll(1, Array((line + "\n").utf8))
}

/// Reads an evemu recording for `--replay`, with a clear message for a missing file.
func loadRecording(_ path: String) throws -> EvemuRecording {
    do {
        return try EvemuRecording(contentsOfFile: path)
    } catch InputDeviceError.notFound {
        throw CarbridgeError("\(path): no such recording (make one with `evemu-record /dev/input/eventN > FILE`)")
    }
}
