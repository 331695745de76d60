import DriveCore
import DriveInputModel
import DriveMapping

/// The evdev names of a config's input sections (stick axes, throttle axis, buttons) resolved to codes,
/// once, when the file is loaded; `CarbridgeConfig.mapperSettings` builds the mapper's settings from it.
/// Every name problem is a `ConfigError` at its file:line.
public struct MappingConfiguration: Sendable {
    /// `steering.axis_x` / `axis_y` as `EV_ABS` codes; nil when they name no axis and the stick does not
    /// steer (then they are not an error, as before: only `source = "stick"` uses them).
    public var stickAxisCodes: (x: UInt16, y: UInt16)?
    /// `throttle.axis` as an `EV_ABS` code; nil = no analog throttle.
    public var throttleAxisCode: UInt16?
    /// `throttle.brake_axis` as an `EV_ABS` code; nil = no brake pedal.
    public var brakeAxisCode: UInt16?
    /// `[buttons]` and `[buttons.long_press]`, resolved.
    public var buttons = ButtonMap()

    /// Nothing resolved yet.
    init() {}

    /// Resolves `config`'s names with `resolver` into `config.mapping`; returns every problem.
    static func resolve(_ config: inout CarbridgeConfig, resolver: any EventCodeResolver) -> [ConfigError] {
        let file = config.file ?? "built-in defaults"
        let lines = config.lines
        var errors: [ConfigError] = []
        func axisCode(_ name: String, key: String) -> Result<UInt16, ConfigError> {
            guard let code = resolver.code(named: name), code.type == 3 else {
                let axes = resolver.knownNames.filter { $0.hasPrefix("ABS_") }
                let hint = EditDistance.closest(to: name.uppercased(), among: axes).map { " (did you mean \"\($0)\"?)" } ?? ""
                return .failure(ConfigError(file: file, line: lines[key], key: key,
                                            message: "\"\(name)\" is not an absolute axis name such as \"ABS_X\"\(hint)"))
            }
            return .success(code.code)
        }

        var mapping = MappingConfiguration()
        let steering = config.steering
        switch (axisCode(steering.axisX, key: "steering.axis_x"), axisCode(steering.axisY, key: "steering.axis_y")) {
        case (.success(let x), .success(let y)):
            mapping.stickAxisCodes = (x, y)
        case (.success(let x), .failure) where steering.source == .wheel:
            // A wheel uses axis_x only.
            mapping.stickAxisCodes = (x, x)
        case (.failure(let error), _) where steering.source == .wheel:
            errors.append(error)
        case (let x, let y) where steering.source == .stick:
            if case .failure(let error) = x { errors.append(error) }
            if case .failure(let error) = y { errors.append(error) }
        default:
            break
        }
        if !config.throttle.axis.isEmpty {
            switch axisCode(config.throttle.axis, key: "throttle.axis") {
            case .success(let code): mapping.throttleAxisCode = code
            case .failure(let error): errors.append(error)
            }
        }
        if !config.throttle.brakeAxis.isEmpty, config.throttle.axis.isEmpty {
            errors.append(ConfigError(
                file: file, line: lines["throttle.brake_axis"], key: "throttle.brake_axis",
                message: "a brake needs a gas pedal: set [throttle] axis too (e.g. axis = \"ABS_Y\")"))
        } else if !config.throttle.brakeAxis.isEmpty {
            switch axisCode(config.throttle.brakeAxis, key: "throttle.brake_axis") {
            case .success(let code): mapping.brakeAxisCode = code
            case .failure(let error): errors.append(error)
            }
        }
        let resolved = ButtonMap.resolveAll(
            bindings: config.buttons.map { ($0.button, $0.action.rawValue, $0.line) },
            longPress: config.longPressButtons.map { ($0.button, $0.action.rawValue, $0.line) },
            resolver: resolver)
        mapping.buttons = resolved.map
        for error in resolved.errors {
            let binding = config.buttons.first { $0.line != nil && $0.line == error.line }
                .map { ("buttons.", $0) }
                ?? config.longPressButtons.first { $0.line != nil && $0.line == error.line }.map { ("buttons.long_press.", $0) }
            var message = error.description
            if let line = error.line, message.hasPrefix("line \(line): ") {
                message.removeFirst("line \(line): ".count)
            }
            errors.append(ConfigError(file: file, line: error.line, key: binding.map { $0.0 + $0.1.button }, message: message))
        }
        config.mapping = mapping
        return errors
    }
}

extension CarbridgeConfig {
    /// The `ControlMapper` settings for this config: its typed values and the names resolved at load.
    /// Computed, so a command-line override (`--tilt`, `--max-speed`) is taken into account.
    public var mapperSettings: ControlMapper.Settings {
        var settings = ControlMapper.Settings(stick: nil)
        switch steering.source {
        case .stick:
            settings.stick = mapping.stickAxisCodes.map { codes in
                AxisMapper.Settings(
                    mode: steering.mode == .polar ? .polar : .x, deadzone: steering.deadzone, invert: steering.invert,
                    expo: steering.expo, xAxisCode: codes.x, yAxisCode: codes.y)
            }
        case .tilt:
            settings.tilt = TiltMapper.Settings(
                mountMatrix: steering.tiltAxes.mountMatrix, lateralAxis: steering.tiltAxes.lateral.axis,
                verticalAxis: steering.tiltAxes.vertical.axis, neutralDegrees: steering.neutralDegrees,
                sensitivity: steering.sensitivity, invert: steering.invert,
                filterTimeConstant: .milliseconds(Int64(steering.smoothingMilliseconds.rounded())))
        case .wheel:
            settings.wheel = mapping.stickAxisCodes.map { codes in
                WheelMapper.Settings(
                    axisCode: codes.x, lockDegrees: steering.wheelLockDegrees, rangeDegrees: steering.wheelRangeDegrees,
                    invert: steering.invert)
            }
        case .none, .board:
            break
        }
        settings.handsFree = handsFreeSettings
        if let code = mapping.throttleAxisCode {
            settings.throttle = ThrottleMapper.Settings(
                axisCode: code, maxSpeed: drive.speedCeiling, hysteresis: throttle.hysteresis,
                brakeAxisCode: mapping.brakeAxisCode)
        }
        settings.buttons = mapping.buttons
        settings.gestures = ButtonGestures.Settings(
            longPressDuration: .milliseconds(gestures.longPressMilliseconds),
            repeatEnabled: gestures.repeatDelayMilliseconds > 0,
            repeatDelay: .milliseconds(max(1, gestures.repeatDelayMilliseconds)),
            repeatInterval: .milliseconds(gestures.repeatIntervalMilliseconds))
        return settings
    }

    /// True when the balance board is used (a steering or throttle source is `board`).
    public var usesBoard: Bool { steering.source == .board || throttle.source == .board }

    /// The accelerometer is opened: tilt steering or a tilt throttle.
    public var usesAccelerometer: Bool { steering.source == .tilt || throttle.source == .tilt }

    /// The pitch mapper's settings for the tilt throttle: its own axis pair and neutral, the steering's filter.
    public var pitchSettings: TiltMapper.Settings {
        TiltMapper.Settings(
            mountMatrix: throttle.pitchAxes.mountMatrix, lateralAxis: throttle.pitchAxes.lateral.axis,
            verticalAxis: throttle.pitchAxes.vertical.axis, neutralDegrees: throttle.neutralDegrees,
            filterTimeConstant: .milliseconds(Int64(steering.smoothingMilliseconds.rounded())))
    }

    /// The hands-free part of the mapper; nil when neither the tilt's pitch nor the board drives.
    public var handsFreeSettings: HandsFreeMapper.Settings? {
        var settings = HandsFreeMapper.Settings(
            boardSteers: steering.source == .board,
            boardLean: LeanThrottleMapper.Settings(
                deadZone: board.deadzone, fullScale: board.fullScale, maxSpeed: drive.speedCeiling,
                reverse: throttle.reverse, hysteresis: throttle.hysteresis),
            presence: WeightPresence(
                minimumKilograms: board.minimumWeightKilograms, hysteresisKilograms: board.weightHysteresisKilograms))
        switch throttle.source {
        case .trigger: break
        case .board: settings.throttle = .board
        case .tilt:
            settings.throttle = .tilt(
                pitch: pitchSettings,
                lean: LeanThrottleMapper.Settings(
                    deadZone: throttle.deadzoneDegrees, fullScale: throttle.fullDegrees, maxSpeed: drive.speedCeiling,
                    reverse: throttle.reverse, hysteresis: throttle.hysteresis))
        }
        guard settings.throttle != nil || settings.boardSteers else { return nil }
        if usesBoard || (throttle.source == .tilt && handsfree.armTilt) {
            settings.arming = HandsFreeArming.Settings(
                armAfter: .milliseconds(Int64((handsfree.armAfterSeconds * 1000).rounded())),
                engineOffAfter: .milliseconds(Int64((handsfree.engineOffAfterSeconds * 1000).rounded())))
        }
        return settings
    }
}
