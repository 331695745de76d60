import ArgumentParser
import DriveConfig
import DriveRuntime
import DriveSystem
import Glibc

/// `carbridge check-config FILE`: validate a config file without running anything.
struct CheckConfigCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a config file: syntax, unknown keys, types, ranges and evdev names, each reported as file:line.",
        discussion: """
            Every problem in the file is reported, one line each (file:line: key: message), in file order; \
            only a TOML syntax error stops the check where it is. Exit status 0 when the file is valid (a \
            summary is printed), 1 otherwise. Every key with its type, range and default: \
            carbridge config-reference (or config/carbridge.toml).
            """)

    @Argument(help: ArgumentHelp("The config file to check.", valueName: "file"), completion: .file(extensions: ["toml"]))
    var file: String

    func run() throws {
        var options = CommonOptions()
        options.config = file
        let config: CarbridgeConfig
        do {
            config = try options.loadConfig()
        } catch let errors as ConfigErrors where errors.errors.count > 1 {
            // Every problem, one line each, then how many there are.
            throw CarbridgeError("\(errors)\n\(file): \(errors.errors.count) errors")
        }
        let drive = config.drive
        let idle = drive.idleTimeout.map { "\(Double($0.nanoseconds) / 1e9) s" } ?? "off"
        print("""
            \(file): OK
              link: \(config.link.url) (terminator \(config.link.terminator.name))\
            \(config.link.isBLE ? config.link.bleProfile.map { "\n  BLE profile: \($0)" } ?? "" : "")\
            \(config.link.unusedBLEKeysNotice.map { "\n  note: \($0)" } ?? "")
              drive: period \(drive.period.milliseconds) ms, hysteresis \(drive.hysteresisDegrees)°, \
            max speed \(drive.maxSpeed), idle timeout \(idle), on input lost: \(drive.onInputLost.rawValue)\
            \(drive.deadmanRequired ? ", dead-man required" : "")
              steering: \(config.steering.source.rawValue)\
            \(config.steering.source == .stick ? " (\(config.steering.mode.rawValue), \(config.steering.axisX))" : "")\
            \(config.steering.source == .wheel ? " (\(config.steering.axisX), lock \(config.steering.wheelLockDegrees)°, full steering at ±\(config.steering.wheelRangeDegrees)°)" : "")\
            \(config.throttle.brakeAxis.isEmpty ? "" : "\n  pedals: gas \(config.throttle.axis), brake \(config.throttle.brakeAxis)\(config.throttle.invert ? ", released at the maximum" : "")")\
            \(config.throttle.source == .trigger ? "" : "\n  throttle: \(config.throttle.source.rawValue)")
              devices: gamepad \(config.devices.gamepad.configValue), accelerometer \(config.devices.accelerometer.configValue)\
            \(config.usesBoard ? ", board \(config.devices.board.configValue)" : "")
              buttons: \(config.buttons.map { "\($0.button)=\($0.action.rawValue)" }.joined(separator: " "))\
            \(config.longPressButtons.isEmpty ? "" : "\n  long press: " + config.longPressButtons.map { "\($0.button)=\($0.action.rawValue)" }.joined(separator: " "))\
            \(config.dashboard.listen.map { "\n  dashboard: \(config.dashboard.tls.scheme)://\($0)/" } ?? "")\
            \(config.dashboard.cameraWarning.map { "\n  warning: \($0)" } ?? "")\
            \(config.dashboard.token == nil ? "" : SecretFileMode.warning(tokenIn: file).map { "\n  warning: \($0)" } ?? "")
            """)
    }
}
