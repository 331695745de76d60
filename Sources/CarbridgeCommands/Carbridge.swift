import ArgumentParser
import DriveSystem

/// The `carbridge` command: drive a hobby robot car from Linux input devices. Both executables run it
/// (`carbridge`, and `carbridge-dashboard`, which links the web dashboard: see `DashboardBuild`).
package struct Carbridge: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "carbridge",
        abstract: "Drive a hobby robot car (HC-05 or HM-10 style) from a gamepad, a tilt sensor or the keyboard.",
        discussion: """
            carbridge turns Linux input (evdev gamepads, evdev and IIO accelerometers, the terminal \
            keyboard) into the car's text frames T,A,S,D (e.g. M,0,40,1) and streams them over \
            Bluetooth RFCOMM, Bluetooth Low Energy (through bluetoothd), a serial tty or TCP. One state machine decides what is sent and when; \
            whenever the input, the link or the process goes away, the car is stopped.

            Quick start:
              carbridge run                          keyboard + built-in simulated car
              carbridge car-sim --listen 127.0.0.1:7000   a simulated car
              carbridge run --link tcp://127.0.0.1:7000
              carbridge run --link rfcomm://98:D3:31:F5:2A:11     a paired HC-05
              carbridge run --link ble://HMSoft      an HM-10 or Nordic UART car, by name

            Config: carbridge run --config FILE (config/carbridge.toml lists every option \
            with its default; check a file with carbridge check-config FILE). Device \
            permissions: udev/70-carbridge.rules.
            Exit status: 0 after a clean stop (q, SIGINT, SIGTERM); 1 on a config or runtime error; \
            64 on a usage error.
            """,
        version: carbridgeVersion,
        subcommands: [
            RunCommand.self, CarSimCommand.self, CheckConfigCommand.self, DevicesCommand.self, ScanCommand.self, PairCommand.self,
            UnpairCommand.self,
            MonitorCommand.self, CalibrateCommand.self, ConfigReferenceCommand.self,
        ],
        defaultSubcommand: nil
    )

    /// The root command (no options of its own).
    package init() {}

    /// Parses the command line with argument-parser and runs the command; the one place errors are reported. A usage error
    /// (parsing, `validate()`, a `ValidationError`) is argument-parser's message naming the flag, exit
    /// status 64; `ExitCode` and `CleanExit` pass through; anything else a command throws (a config
    /// file's errors, a runtime failure) is printed as `carbridge: <line>` per line, exit status 1.
    package static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            try command.run()
        } catch {
            // argument-parser's own commands (`help`) throw its errors, which it prints itself.
            guard command is any CarbridgeCommand else { exit(withError: error) }
            exit(withError: runFailure(error))
        }
    }

    /// The error to exit with for `error` thrown by a command's `run()`; reports a runtime failure.
    static func runFailure(_ error: any Error) -> any Error {
        switch error {
        case is ExitCode, is CleanExit, is ValidationError: return error
        default: return reportFailure(error)
        }
    }
}

/// A carbridge subcommand: what its `run()` throws is reported by `Carbridge.main`.
protocol CarbridgeCommand: ParsableCommand {}

/// Prints `carbridge: <error>` to stderr (without blocking; written at exit at the latest), one such
/// line per problem of a config file, and gives the exit code for it. When stderr is the journal each
/// line carries the error priority (`<3>`), so `journalctl -p err` shows why a service did not start.
func reportFailure(_ error: any Error) -> ExitCode {
    let prefix = JournalStream.isJournal(fd: 2) ? JournalStream.prefix(priority: 3) : ""
    for line in "\(error)".split(separator: "\n", omittingEmptySubsequences: false) {
        BoundedWriter.standardError.write("\(prefix)carbridge: \(line)")
    }
    return ExitCode(1)
}
