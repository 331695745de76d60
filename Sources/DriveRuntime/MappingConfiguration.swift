import DriveCore
import DriveInput
import DriveMapping

/// Turns the input sections of a `CarbridgeConfig` into `ControlMapper.Settings`, resolving
/// evdev names through libevdev; every problem becomes a `ConfigError` at its file:line.
public enum MappingConfiguration {
    /// The mapper settings for `config`; `resolver` defaults to libevdev's names.
    public static func mapperSettings(
        for config: CarbridgeConfig, resolver: any EventCodeResolver = EventCodeNames()
    ) throws -> ControlMapper.Settings {
        let file = config.file ?? "built-in defaults"
        func axisCode(_ name: String, key: String) throws -> UInt16 {
            guard let code = resolver.code(named: name), code.type == 3 else {
                let axes = resolver.knownNames.filter { $0.hasPrefix("ABS_") }
                let hint = EditDistance.closest(to: name.uppercased(), among: axes).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw ConfigError(file: file, line: config.lines[key], key: key,
                                  message: "\"\(name)\" is not an absolute axis name such as \"ABS_X\"\(hint)")
            }
            return code.code
        }

        var settings = ControlMapper.Settings(stick: nil)
        let steering = config.steering
        switch steering.source {
        case .stick:
            settings.stick = AxisMapper.Settings(
                mode: steering.mode == .polar ? .polar : .x, deadzone: steering.deadzone, invert: steering.invert,
                expo: steering.expo, xAxisCode: try axisCode(steering.axisX, key: "steering.axis_x"),
                yAxisCode: try axisCode(steering.axisY, key: "steering.axis_y"))
        case .tilt:
            let axes = steering.tiltAxes.split(separator: ",").map { $0.trimmingSpaces }
            let lateral = TiltMapper.Axis(rawValue: String(axes[0].last ?? "x")) ?? .x
            let vertical = TiltMapper.Axis(rawValue: String(axes[1].last ?? "z")) ?? .z
            // A "-" flips an axis: done with the mount matrix, which the tilt mapper applies.
            var diagonal = Vector3(x: 1, y: 1, z: 1)
            for axis in axes where axis.hasPrefix("-") {
                switch axis.last {
                case "x": diagonal.x = -1
                case "y": diagonal.y = -1
                default: diagonal.z = -1
                }
            }
            settings.tilt = TiltMapper.Settings(
                mountMatrix: MountMatrix(
                    Vector3(x: diagonal.x, y: 0, z: 0), Vector3(x: 0, y: diagonal.y, z: 0), Vector3(x: 0, y: 0, z: diagonal.z)),
                lateralAxis: lateral, verticalAxis: vertical, neutralDegrees: steering.neutralDegrees,
                sensitivity: steering.sensitivity, invert: steering.invert,
                filterTimeConstant: .milliseconds(Int64(steering.smoothingMilliseconds.rounded())))
        case .none:
            break
        }
        if !config.throttle.axis.isEmpty {
            settings.throttle = ThrottleMapper.Settings(
                axisCode: try axisCode(config.throttle.axis, key: "throttle.axis"),
                maxSpeed: config.drive.speedCeiling)
        }
        do {
            settings.buttons = try ButtonMap.parse(
                bindings: config.buttons.map { ($0.button, $0.action, $0.line) },
                longPress: config.longPressButtons.map { ($0.button, $0.action, $0.line) },
                resolver: resolver)
        } catch {
            let all = config.buttons + config.longPressButtons
            let binding = all.first { $0.line != nil && $0.line == error.line }
            let isLong = binding.map { config.longPressButtons.contains($0) } ?? false
            var message = error.description
            if let line = error.line, message.hasPrefix("line \(line): ") {
                message.removeFirst("line \(line): ".count)
            }
            throw ConfigError(
                file: file, line: error.line,
                key: binding.map { (isLong ? "buttons.long_press." : "buttons.") + $0.button }, message: message)
        }
        let gestures = config.gestures
        settings.gestures = ButtonGestures.Settings(
            longPressDuration: .milliseconds(gestures.longPressMilliseconds),
            repeatEnabled: gestures.repeatDelayMilliseconds > 0,
            repeatDelay: .milliseconds(max(1, gestures.repeatDelayMilliseconds)),
            repeatInterval: .milliseconds(gestures.repeatIntervalMilliseconds))
        return settings
    }
}
