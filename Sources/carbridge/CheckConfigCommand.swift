import ArgumentParser
import DriveRuntime
import Foundation

/// `carbridge check-config FILE`: validate a config file without running anything.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a config file: syntax, unknown keys, types and ranges, each reported as file:line.",
        discussion: "Exit status 0 when the file is valid (a summary is printed), 1 otherwise.")

    @Argument(help: ArgumentHelp("The config file to check.", valueName: "file"))
    var file: String

    func run() throws {
        var options = CommonOptions()
        options.config = file
        let config: CarbridgeConfig
        do {
            config = try options.loadConfig()
        } catch {
            throw reportFailure(error)
        }
        let drive = config.drive
        let idle = drive.idleTimeout.map { "\(Double($0.nanoseconds) / 1e9) s" } ?? "off"
        print("""
            \(file): OK
              link: \(config.link.url) (terminator \(config.link.terminator.name))
              drive: period \(drive.period.milliseconds) ms, hysteresis \(drive.hysteresisDegrees)°, \
            max speed \(drive.maxSpeed), idle timeout \(idle), on input lost: \(drive.onInputLost.rawValue)\
            \(drive.deadmanRequired ? ", dead-man required" : "")
              steering: \(config.steering.source.rawValue)\
            \(config.steering.source == .stick ? " (\(config.steering.mode.rawValue), \(config.steering.axisX))" : "")
              devices: gamepad \(config.devices.gamepad), accelerometer \(config.devices.accelerometer)
              buttons: \(config.buttons.map { "\($0.button)=\($0.action)" }.joined(separator: " "))
            """)
    }
}
