import DriveCore
import DriveInputModel
import DriveLinkModel
import DriveMapping

/// Every key of `carbridge.toml`, each declared once: table, name, type, default, allowed values, doc and
/// where its typed value goes. `CarbridgeConfig`'s defaults are these declarations' `defaultValue`s, the
/// loader reads each table's `keys`, `carbridge run`'s flags go through `value(fromArgument:)`, and
/// `config/carbridge.toml` and `carbridge.toml(5)` are rendered from `tables` (`ConfigReference`).
public enum ConfigKeys {
    // MARK: [link]

    /// `[link] url`.
    public static let url: ConfigKey<String> = ConfigKey(
        "link", "url", .string, default: .string("sim"),
        doc: "Where the car is: sim, stdout, tcp://HOST:PORT, serial:///dev/TTY?baud=N, rfcomm://ADDR[/CHANNEL] or ble://NAME.",
        details: [
            "  \"sim\"                                  the built-in simulated car (default; runs anywhere)",
            "  \"stdout\"                               dry run: print each frame with a monotonic timestamp",
            "  \"tcp://HOST:PORT\"                      a Wi-Fi car, or `carbridge car-sim`",
            "  \"serial:///dev/rfcomm0?baud=9600\"      a serial tty (bound RFCOMM, USB-serial); baud 9600…115200",
            "  \"rfcomm://AA:BB:CC:DD:EE:FF/1\"         a Bluetooth car (HC-05/HC-06), channel 1 by default",
            "  \"rfcomm://HC-05\"                       the same, by name (`carbridge scan` lists them)",
            "  \"ble://HMSoft\"                         a Bluetooth Low Energy car (HM-10, Nordic UART), by name",
            "  \"ble://C8:FD:19:12:34:56\"              the same, by address",
        ],
        at: \.link.url
    ) { scalar throws(ConfigValueError) in
        let url = scalar.stringValue ?? ""
        if url.isEmpty { throw ConfigValueError("must not be empty (use \"sim\" for the built-in car)") }
        // The parser the link factory uses, so a file or flag is accepted exactly when run can use it.
        do {
            _ = try LinkURL(parsing: url)
        } catch {
            throw ConfigValueError("\(error)")
        }
        return url
    }

    /// `[link] terminator`.
    public static let terminator: ConfigKey<FrameTerminator> = ConfigKey(
        "link", "terminator", .choice(FrameTerminator.allCases.map(\.name)), default: .string("lf"),
        doc: "What ends each frame: \"lf\" (\\n), \"crlf\" (\\r\\n) or \"none\".", at: \.link.terminator
    ) { FrameTerminator(name: $0.stringValue ?? "") ?? .lineFeed }

    /// `[link] connect_timeout_ms`.
    public static let connectTimeout: ConfigKey<Int> = .integer(
        "link", "connect_timeout_ms", default: 5000, range: 100...120_000,
        doc: "How long one connection attempt may take, in milliseconds.",
        details: ["Lost links reconnect with back-off: 0.5 s, doubling, at most 5 s."],
        at: \.link.connectTimeoutMilliseconds)

    /// `[link] max_in_flight`.
    public static let maxInFlight: ConfigKey<Int> = .integer(
        "link", "max_in_flight", default: 2, range: 1...64,
        doc: "At most this many motion frames wait in the kernel's output queue (SIOCOUTQ/TIOCOUTQ).",
        details: [
            "A newer one waits in carbridge, newest wins. A radio fade then cannot pile up stale \"go\" frames",
            "that the car would replay when the radio returns. E and F frames always go, in order.",
        ],
        at: \.link.maxInFlight)

    /// `[link] stall_timeout_ms`.
    public static let stallTimeout: ConfigKey<Int> = .integer(
        "link", "stall_timeout_ms", default: 1000, range: 200...60_000,
        doc: "A kernel output queue that does not shrink for this long (ms) means the link is down.",
        details: ["It is closed abortively (nothing queued arrives later) and reconnected."],
        at: \.link.stallTimeoutMilliseconds)

    /// `[link] ble_service`.
    public static let bleService: ConfigKey<String?> = bleUUID(
        "ble_service",
        doc: "A ble:// car's GATT UART service, for a module carbridge does not recognise; \"\" = recognise it.",
        details: [
            "HM-10 (and kin: AT-09, HC-08, JDY), Nordic UART and Microchip transparent UART modules are recognised",
            "from the services they offer. A UUID is 16-bit (\"FFE0\", \"0xFFE0\") or 128-bit",
            "(\"6e400001-b5a3-f393-e0a9-e50e24dcca9e\"). Set ble_write with it. Only ble:// links use these keys.",
        ],
        at: \.link.bleService)

    /// `[link] ble_write`.
    public static let bleWrite: ConfigKey<String?> = bleUUID(
        "ble_write", doc: "The characteristic frames are written to (with ble_service); \"\" = the recognised module's.",
        at: \.link.bleWrite)

    /// `[link] ble_notify`.
    public static let bleNotify: ConfigKey<String?> = bleUUID(
        "ble_notify",
        doc: "The characteristic the car's lines come from; \"\" = ble_write (one characteristic both ways, as an HM-10).",
        at: \.link.bleNotify)

    /// The problem with `[link]`'s BLE keys together, and the keys it is about; nil when they fit.
    static func bleKeysProblem(_ link: CarbridgeConfig.Link) -> (message: String, keys: [String])? {
        switch (link.bleService, link.bleWrite) {
        case (.some, nil), (nil, .some):
            return (
                "ble_service and ble_write go together: set both (the UART service and the characteristic frames are "
                    + "written to, e.g. ble_service = \"FFE0\" and ble_write = \"FFE1\"), or neither to recognise the module",
                [bleService.name, bleWrite.name])
        case (nil, nil) where link.bleNotify != nil:
            return (
                "ble_notify needs ble_service and ble_write (e.g. ble_service = \"FFE0\", ble_write = \"FFE1\")",
                [bleNotify.name])
        default:
            return nil
        }
    }

    // MARK: [drive]

    /// `[drive] period_ms`.
    public static let period: ConfigKey<Duration> = ConfigKey(
        "drive", "period_ms", .integer(10...1000), default: .integer(50),
        doc: "While the speed is above 0 the current frame is repeated every period_ms milliseconds.",
        at: \.drive.period
    ) { .milliseconds($0.integerValue ?? 50) }

    /// `[drive] hysteresis_deg`.
    public static let hysteresis: ConfigKey<Double> = .number(
        "drive", "hysteresis_deg", default: 2, range: 0...20,
        doc: "Hysteresis around the steering range boundaries (±15°, ±60°), in degrees; 0 = the bare table.",
        at: \.drive.hysteresisDegrees)

    /// `[drive] max_speed`.
    public static let maxSpeed: ConfigKey<Int> = .integer(
        "drive", "max_speed", default: 240, range: 10...240, doc: "Speed cap for Speed+, a multiple of 10.",
        at: \.drive.maxSpeed
    ) { $0 % 10 == 0 ? nil : "\($0) is not a multiple of 10 (speeds go in steps of 10)" }

    /// `[drive] idle_timeout_s`.
    public static let idleTimeout: ConfigKey<Duration?> = ConfigKey(
        "drive", "idle_timeout_s", .number(0...86_400), default: .number(0),
        doc: "Turn the engine off after this many seconds without driver activity; 0 = never.",
        at: \.drive.idleTimeout
    ) { ConfigKeys.durationOrOff(seconds: $0.numberValue ?? 0) }

    /// `[drive] on_input_lost`.
    public static let onInputLost: ConfigKey<DriveSettings.InputLossPolicy> = .choice(
        "drive", "on_input_lost", default: DriveSettings.InputLossPolicy.stop,
        doc: "What happens when the steering or button device disappears or stops delivering.",
        details: [
            "  \"stop\"        speed 0 and the stop frame (default)",
            "  \"engine-off\"  E,0,0,0",
        ],
        at: \.drive.onInputLost)

    // MARK: [car]

    /// `[car] low_battery`.
    public static let lowBattery: ConfigKey<LowBatteryRule?> = ConfigKey(
        "car", "low_battery", .string, default: .string(""),
        doc: "Warn when a status key of the car falls below a value: \"KEY<NUMBER\", e.g. \"BAT<6.8\"; \"\" = off.",
        details: [
            "The car reports its status as KEY=VALUE lines (BAT=7.42; docs/protocol.md §7). A value below the threshold",
            "raises a notice, a rumble cue and the dashboard's warning once; it warns again only after a value at least",
            "0.2 above the threshold. carbridge only warns: whether a low battery stops the car is its firmware's call.",
        ],
        at: \.car.lowBattery
    ) { scalar throws(ConfigValueError) in
        let text = scalar.stringValue ?? ""
        if text.isEmpty { return nil }
        do throws(LowBatteryRule.ParseError) {
            return try LowBatteryRule(parsing: text)
        } catch {
            throw ConfigValueError(error.reason)
        }
    }

    // MARK: [kiosk]

    /// `[kiosk] session_limit_s`.
    public static let sessionLimit: ConfigKey<Duration?> = ConfigKey(
        "kiosk", "session_limit_s", .number(0...86_400), default: .number(0),
        doc: "One driver's turn, in seconds from the engine going on; 0 = no limit, otherwise at least 1.",
        details: [
            "The turn ends with the engine off (the stop frame first if the car is moving, then E,0,0,0);",
            "the next press of Engine starts a new turn.",
        ],
        at: \.kiosk.sessionLimit
    ) { scalar throws(ConfigValueError) in
        let seconds = scalar.numberValue ?? 0
        if seconds > 0 && seconds < 1 {
            throw ConfigValueError(
                "\(seconds) is too short: a turn lasts at least 1 s (0 = no limit; the value is in seconds)")
        }
        return ConfigKeys.durationOrOff(seconds: seconds)
    }

    // MARK: [keyboard]

    /// `[keyboard] enabled`.
    public static let keyboardEnabled: ConfigKey<Bool> = .boolean(
        "keyboard", "enabled", default: true, doc: "Drive from the terminal keyboard when stdin is a terminal.",
        details: ["  e engine · Up/+ Speed+ · Down/- Speed- · g gear · Left/Right steer · c centre · 1-5 F1-F5 · q quit"],
        at: \.keyboard.enabled)

    /// `[keyboard] steer_step_deg`.
    public static let steerStep: ConfigKey<Double> = .number(
        "keyboard", "steer_step_deg", default: 20, range: 1...90,
        doc: "How far Left/Right move the steering angle per press, in degrees.", at: \.keyboard.steerStepDegrees)

    // MARK: [devices]

    /// `[devices] gamepad`.
    public static let gamepad: ConfigKey<DeviceMatch> = deviceMatch(
        "gamepad", default: .auto, doc: "The gamepad that drives.",
        details: [
            "\"auto\" (the first one found), \"none\", a name glob (\"Xbox*\"), \"vendor:product\" in hex",
            "(\"045e:028e\"), a udev path (ID_PATH or /sys/... path), or a Bluetooth pad's address",
            "(\"e4:17:d8:3a:9c:01\"; `carbridge devices` shows it as uniq; uniq:SERIAL for USB serials).",
            "Devices are never picked by their /dev/input/eventN number: it changes on every replug.",
        ],
        at: \.devices.gamepad)

    /// `[devices] accelerometer`.
    public static let accelerometer: ConfigKey<DeviceMatch> = deviceMatch(
        "accelerometer", default: .auto,
        doc: "The accelerometer, matched like gamepad; used when [steering] source = \"tilt\" (evdev or IIO).",
        at: \.devices.accelerometer)

    /// `[devices] keyboard`.
    public static let keyDevice: ConfigKey<DeviceMatch> = deviceMatch(
        "keyboard", default: .none,
        doc: "Extra key devices (arcade buttons, foot pedals), matched like gamepad; \"none\" = off.",
        at: \.devices.keyboard)

    /// `[devices] board`.
    public static let board: ConfigKey<DeviceMatch> = deviceMatch(
        "board", default: .auto,
        doc: "The Wii Balance Board, matched like gamepad; used when a [steering] or [throttle] source is \"board\".",
        details: ["The kernel's hid-wiimote names it \"Nintendo Wii Remote Balance Board\" (pair it with `carbridge pair`)."],
        at: \.devices.board)

    /// `[devices] grab`.
    public static let grab: ConfigKey<Bool> = .boolean(
        "devices", "grab", default: false,
        doc: "Take the gamepad exclusively (EVIOCGRAB) so the desktop does not also act on it.", at: \.devices.grab)

    /// `[devices] mapping_db`.
    public static let mappingDB: ConfigKey<String?> = ConfigKey(
        "devices", "mapping_db", .string, default: .string(""),
        doc: "A GameControllerDB file of your own (SDL's format, one line per pad); \"\" = none.",
        details: [
            "A pad's layout: the [buttons] table (the pad's own codes, as `carbridge monitor` shows them), else",
            "this file, else SDL_GAMECONTROLLERCONFIG from the environment, else the built-in community DB,",
            "else the kernel's codes. A pad with a DB entry works with the default [buttons] and axis_x.",
        ],
        at: \.devices.mappingDB
    ) { scalar throws(ConfigValueError) in
        let path = scalar.stringValue ?? ""
        return path.isEmpty ? nil : path
    }

    // MARK: [feedback]

    /// `[feedback] rumble`.
    public static let rumble: ConfigKey<Bool> = .boolean(
        "feedback", "rumble", default: true,
        doc: "Buzz the pad (FF_RUMBLE) on engine on, a stop, a kiosk turn's last 10 s and the speed cap.",
        details: [
            "Engine on: one short pulse; link lost or input lost: one long; turn ending in 10 s: two short;",
            "Speed+ at max_speed: one very short. Pads without force feedback are skipped silently.",
        ],
        at: \.feedback.rumble)

    /// `[feedback] strength`.
    public static let rumbleStrength: ConfigKey<Double> = .number(
        "feedback", "strength", default: 0.75, range: 0...1,
        doc: "How strong the rumble is, 0 (off) to 1 (the motors' full strength).", at: \.feedback.strength)

    /// `[feedback] centring`.
    public static let centring: ConfigKey<Double> = .number(
        "feedback", "centring", default: 0.5, range: 0...1,
        doc: "A racing wheel's centring spring while the engine is on, 0 (never) to 1 (the wheel's full force).",
        details: [
            "Only with [steering] source = \"wheel\": FF_SPRING where the wheel has it, else FF_AUTOCENTER;",
            "released when the engine goes off. Wheels without either are skipped silently.",
        ],
        at: \.feedback.centring)

    /// `[feedback] lights`.
    public static let lights: ConfigKey<Bool> = .boolean(
        "feedback", "lights", default: true,
        doc: "Show the car's status in the pad's coloured light (a DualSense's lightbar, a DualShock 4's).",
        details: [
            "The first that holds: link down, input refused, pad battery low, driving, engine on and stopped,",
            "engine off; each colour below. The pad's own colour comes back when it closes or carbridge stops.",
            "Pads without such a light are skipped silently; writing it needs the udev rule (docs/deployment.md).",
        ],
        at: \.feedback.lights)

    /// `[feedback] light_link_down`.
    public static let lightLinkDown: ConfigKey<LightColour> = lightColour(
        "light_link_down", default: "#ff0000", doc: "The light while the link to the car is down (nothing reaches the car).",
        at: \.feedback.lightLinkDown)

    /// `[feedback] light_input_refused`.
    public static let lightInputRefused: ConfigKey<LightColour> = lightColour(
        "light_input_refused", default: "#ff00ff",
        doc: "The light while the car refuses to move because a driving input is lost (until it is back).",
        at: \.feedback.lightInputRefused)

    /// `[feedback] light_battery_low`.
    public static let lightBatteryLow: ConfigKey<LightColour> = lightColour(
        "light_battery_low", default: "#ff6000", doc: "The light while this pad's battery is low (pad_low_battery).",
        at: \.feedback.lightBatteryLow)

    /// `[feedback] light_driving`.
    public static let lightDriving: ConfigKey<LightColour> = lightColour(
        "light_driving", default: "#00ff00", doc: "The light while the engine is on and the speed above 0.",
        at: \.feedback.lightDriving)

    /// `[feedback] light_stopped`.
    public static let lightStopped: ConfigKey<LightColour> = lightColour(
        "light_stopped", default: "#006060", doc: "The light while the engine is on and the car stands (speed 0).",
        at: \.feedback.lightStopped)

    /// `[feedback] light_engine_off`.
    public static let lightEngineOff: ConfigKey<LightColour> = lightColour(
        "light_engine_off", default: "#303030", doc: "The light while the engine is off.", at: \.feedback.lightEngineOff)

    /// `[feedback] pad_low_battery`.
    public static let padLowBattery: ConfigKey<Int> = .integer(
        "feedback", "pad_low_battery", default: 20, range: 0...95,
        doc: "Warn when a pad's battery is at or below this many percent and not charging; 0 = never.",
        details: [
            "Read when the pad opens and every 30 s. The log, the live view and the dashboard warn once; again only",
            "after the battery was above this + 5 % or the pad reconnected. The pad's light turns light_battery_low.",
        ],
        at: \.feedback.padLowBattery)

    // MARK: [steering]

    /// `[steering] source`.
    public static let source: ConfigKey<CarbridgeConfig.SteeringSource> = .choice(
        "steering", "source", default: CarbridgeConfig.SteeringSource.stick,
        doc: "Where the steering angle comes from.",
        details: [
            "\"board\": the balance board's sideways centre of pressure, with [board] deadzone and full_scale.",
            "\"wheel\": a racing wheel's axis_x over its whole range, through wheel_lock_deg and wheel_range_deg.",
        ],
        at: \.steering.source)

    /// `[steering] mode`.
    public static let mode: ConfigKey<CarbridgeConfig.StickMode> = .choice(
        "steering", "mode", default: CarbridgeConfig.StickMode.x,
        doc: "Stick mapping: \"x\" (horizontal deflection × 90°) or \"polar\" (the stick's direction).",
        details: ["Polar: north 0°, clockwise positive."], at: \.steering.mode)

    /// `[steering] axis_x`.
    public static let axisX: ConfigKey<String> = evdevName(
        "steering", "axis_x", default: "ABS_X", doc: "The stick's horizontal axis (an evdev ABS_ name).",
        at: \.steering.axisX)

    /// `[steering] axis_y`.
    public static let axisY: ConfigKey<String> = evdevName(
        "steering", "axis_y", default: "ABS_Y", doc: "The stick's vertical axis (polar mode).", at: \.steering.axisY)

    /// `[steering] deadzone`.
    public static let deadzone: ConfigKey<Double> = .number(
        "steering", "deadzone", default: 0.1, range: 0...0.9,
        doc: "Fraction of the stick's travel ignored around centre; full deflection still reaches ±90°.",
        at: \.steering.deadzone)

    /// `[steering] invert`.
    public static let invert: ConfigKey<Bool> = .boolean(
        "steering", "invert", default: false, doc: "Flip left and right.", at: \.steering.invert)

    /// `[steering] expo`.
    public static let expo: ConfigKey<Double> = .number(
        "steering", "expo", default: 0, range: 0...1,
        doc: "0 = linear response … 1 = fully cubic (fine control near centre).", at: \.steering.expo)

    /// `[steering] wheel_lock_deg`.
    public static let wheelLock: ConfigKey<Double> = .number(
        "steering", "wheel_lock_deg", default: 900, range: 90...3600,
        doc: "Wheel: its rotation lock to lock, in degrees (900 for a Logitech G29/G920, 1080 for a Thrustmaster T300).",
        at: \.steering.wheelLockDegrees)

    /// `[steering] wheel_range_deg`.
    public static let wheelRange: ConfigKey<Double> = .number(
        "steering", "wheel_range_deg", default: 90, range: 5...1800,
        doc: "Wheel: the wheel angle each side of centre that gives full steering (±90°); at most half the lock.",
        details: ["90 = a quarter turn each way steers the car's full range; beyond it the steering stays at full."],
        at: \.steering.wheelRangeDegrees)

    /// `[steering] tilt_axes`.
    public static let tiltAxes: ConfigKey<TiltAxes> = ConfigKey(
        "steering", "tilt_axes", .string, default: .string("x,z"),
        doc: "Tilt: the roll is atan2(first, second) over these accelerometer axes; a \"-\" flips an axis.",
        details: ["Two different axes among x, y, z, e.g. \"x,z\" or \"-y,z\" (applied after the mount matrix)."],
        at: \.steering.tiltAxes
    ) { scalar throws(ConfigValueError) in
        let text = scalar.stringValue ?? ""
        guard let axes = TiltAxes(parsing: text) else {
            throw ConfigValueError("\"\(text)\" must name two different axes, e.g. \"x,z\" or \"-y,z\"")
        }
        return axes
    }

    /// `[steering] neutral_deg`.
    public static let neutral: ConfigKey<Double> = .number(
        "steering", "neutral_deg", default: 0, range: -180...180,
        doc: "The tilt that means straight ahead, in degrees (`carbridge calibrate` writes it).",
        at: \.steering.neutralDegrees)

    /// `[steering] sensitivity`.
    public static let sensitivity: ConfigKey<Double> = .number(
        "steering", "sensitivity", default: 1, range: 0.05...20,
        doc: "Steering angle = (roll - neutral) × sensitivity, clamped to ±90°.", at: \.steering.sensitivity)

    /// `[steering] smoothing_ms`.
    public static let smoothing: ConfigKey<Double> = .number(
        "steering", "smoothing_ms", default: 80, range: 0...5000,
        doc: "Low-pass filter time constant for tilt, in milliseconds; 0 = off.", at: \.steering.smoothingMilliseconds)

    /// `[steering] sample_rate_hz`.
    public static let sampleRate: ConfigKey<Double> = .number(
        "steering", "sample_rate_hz", default: 50, range: 1...1000,
        doc: "How often an IIO accelerometer is read, in Hz.", at: \.steering.sampleRateHertz)

    /// `[steering] input_timeout_ms`.
    public static let inputTimeout: ConfigKey<Int> = .integer(
        "steering", "input_timeout_ms", default: 500, range: 50...10_000,
        doc: "An accelerometer that gives no sample for this long (ms) counts as lost input.",
        at: \.steering.inputTimeoutMilliseconds)

    // MARK: [throttle]

    /// `[throttle] axis`.
    public static let throttleAxis: ConfigKey<String> = evdevName(
        "throttle", "axis", default: "", doc: "An analog trigger as throttle (e.g. \"ABS_RZ\"); \"\" = off.",
        details: [
            "Speed = the trigger's value (0…1, as `carbridge monitor` shows it) × 240, rounded down to a step",
            "of 10, capped by max_speed; off = Speed+ / Speed- only.",
        ],
        at: \.throttle.axis)

    /// `[throttle] source`.
    public static let throttleSource: ConfigKey<CarbridgeConfig.ThrottleSource> = .choice(
        "throttle", "source", default: CarbridgeConfig.ThrottleSource.trigger,
        doc: "Where the speed comes from besides Speed+/Speed-: \"trigger\" (axis), \"tilt\" (pitch) or \"board\".",
        details: [
            "  \"trigger\"  the analog axis above, if set",
            "  \"tilt\"     the accelerometer's pitch: lean forward past deadzone_deg to go, full_deg is max_speed",
            "  \"board\"    the balance board's forward centre of pressure ([board] deadzone, full_scale)",
            "Leaning back past the dead zone stops; after every stop the lean must come back to neutral first.",
        ],
        at: \.throttle.source)

    /// `[throttle] pitch_axes`.
    public static let pitchAxes: ConfigKey<TiltAxes> = ConfigKey(
        "throttle", "pitch_axes", .string, default: .string("y,z"),
        doc: "Tilt throttle: the pitch is atan2(first, second) over these axes (after the mount matrix); \"-\" flips.",
        details: ["Leaning forward must make the pitch grow; flip the first axis (\"-y,z\") if it shrinks."],
        at: \.throttle.pitchAxes
    ) { scalar throws(ConfigValueError) in
        let text = scalar.stringValue ?? ""
        guard let axes = TiltAxes(parsing: text) else {
            throw ConfigValueError("\"\(text)\" must name two different axes, e.g. \"y,z\" or \"-y,z\"")
        }
        return axes
    }

    /// `[throttle] neutral_deg`.
    public static let pitchNeutral: ConfigKey<Double> = .number(
        "throttle", "neutral_deg", default: 0, range: -180...180,
        doc: "The pitch that means standing still, in degrees (`carbridge calibrate` writes it with the roll's).",
        at: \.throttle.neutralDegrees)

    /// `[throttle] deadzone_deg`.
    public static let pitchDeadzone: ConfigKey<Double> = .number(
        "throttle", "deadzone_deg", default: 5, range: 0...45,
        doc: "Tilt throttle: pitch around neutral that means stand still, in degrees.", at: \.throttle.deadzoneDegrees)

    /// `[throttle] full_deg`.
    public static let pitchFull: ConfigKey<Double> = .number(
        "throttle", "full_deg", default: 25, range: 1...90,
        doc: "Tilt throttle: the forward pitch that gives max_speed, in degrees (more than deadzone_deg).",
        at: \.throttle.fullDegrees)

    /// `[throttle] reverse`.
    public static let reverse: ConfigKey<Bool> = .boolean(
        "throttle", "reverse", default: false,
        doc: "Tilt/board throttle: leaning back drives backwards (the stop frame, then Gear); false = leaning back stops.",
        at: \.throttle.reverse)

    /// `[throttle] hysteresis`.
    public static let throttleHysteresis: ConfigKey<Double> = .number(
        "throttle", "hysteresis", default: 0.25, range: 0...1,
        doc: "Every analog throttle: a speed step changes only past its boundary by this fraction of a step.",
        details: [
            "A trigger, pedal, pitch or lean resting on a boundary then holds one speed instead of",
            "sending a frame on every bit of noise; 0 = the bare steps.",
        ],
        at: \.throttle.hysteresis)

    /// `[throttle] brake_axis`.
    public static let brakeAxis: ConfigKey<String> = evdevName(
        "throttle", "brake_axis", default: "", doc: "A brake pedal (e.g. \"ABS_Z\"); \"\" = none.",
        details: [
            "Pressed past a tenth of its travel it stops the car (the stop frame); the gas pedal drives again",
            "only once the brake is released and the gas has been back at rest.",
        ],
        at: \.throttle.brakeAxis)

    /// `[throttle] invert`.
    public static let pedalsInverted: ConfigKey<Bool> = .boolean(
        "throttle", "invert", default: false,
        doc: "The throttle and brake axes report their maximum at rest (a Logitech wheel's pedals: released = 255).",
        at: \.throttle.invert)

    // MARK: [board]

    /// `[board] min_weight_kg`.
    public static let minWeight: ConfigKey<Double> = .number(
        "board", "min_weight_kg", default: 20, range: 1...150,
        doc: "From this weight (kg) someone stands on the board; stepping off is the dead-man (the car stops).",
        at: \.board.minimumWeightKilograms)

    /// `[board] weight_hysteresis_kg`.
    public static let weightHysteresis: ConfigKey<Double> = .number(
        "board", "weight_hysteresis_kg", default: 5, range: 0...50,
        doc: "The rider counts as gone only below min_weight_kg minus this, so a light rider does not flicker.",
        at: \.board.weightHysteresisKilograms)

    /// `[board] deadzone`.
    public static let boardDeadzone: ConfigKey<Double> = .number(
        "board", "deadzone", default: 0.1, range: 0...0.9,
        doc: "Centre of pressure around the middle ignored, as a fraction of the half-width (steering and throttle).",
        at: \.board.deadzone)

    /// `[board] full_scale`.
    public static let boardFullScale: ConfigKey<Double> = .number(
        "board", "full_scale", default: 0.5, range: 0.05...1,
        doc: "The centre of pressure (fraction of the half-width) that gives full lock or max_speed.",
        at: \.board.fullScale)

    // MARK: [handsfree]

    /// `[handsfree] arm_after_s`.
    public static let armAfter: ConfigKey<Double> = .number(
        "handsfree", "arm_after_s", default: 2, range: 0.1...60,
        doc: "The engine goes on when the rider has stood still (lean inside the dead zone) this long, in seconds.",
        details: ["Always on with a board; with a tilt rig only when arm_tilt = true. A wobble restarts the count."],
        at: \.handsfree.armAfterSeconds)

    /// `[handsfree] engine_off_after_s`.
    public static let engineOffAfter: ConfigKey<Double> = .number(
        "handsfree", "engine_off_after_s", default: 5, range: 0...600,
        doc: "After stepping off the board (the car stops at once) the engine goes off this many seconds later.",
        at: \.handsfree.engineOffAfterSeconds)

    /// `[handsfree] arm_tilt`.
    public static let armTilt: ConfigKey<Bool> = .boolean(
        "handsfree", "arm_tilt", default: false,
        doc: "Tilt rig: the engine goes on when the sensor is held near neutral for arm_after_s (opt-in).",
        details: ["Off by default: a laptop lying on a desk is still too."],
        at: \.handsfree.armTilt)

    // MARK: [gestures]

    /// `[gestures] long_press_ms`.
    public static let longPress: ConfigKey<Int> = .integer(
        "gestures", "long_press_ms", default: 600, range: 100...10_000,
        doc: "A press held this long (ms) triggers the [buttons.long_press] binding instead.",
        at: \.gestures.longPressMilliseconds)

    /// `[gestures] repeat_delay_ms`.
    public static let repeatDelay: ConfigKey<Int> = .integer(
        "gestures", "repeat_delay_ms", default: 0, range: 0...10_000,
        doc: "Hold Speed+/Speed- this long (ms) to repeat; 0 = no repeat.", at: \.gestures.repeatDelayMilliseconds)

    /// `[gestures] repeat_interval_ms`.
    public static let repeatInterval: ConfigKey<Int> = .integer(
        "gestures", "repeat_interval_ms", default: 150, range: 20...5000,
        doc: "The repeat period (ms) while Speed+/Speed- is held.", at: \.gestures.repeatIntervalMilliseconds)

    // MARK: [dashboard]

    /// `[dashboard] listen`.
    public static let listen: ConfigKey<ListenAddress?> = ConfigKey(
        "dashboard", "listen", .string, default: .string(""),
        doc: "Serve the web dashboard and /metrics on HOST:PORT; \"\" = off (no server is started).",
        details: [
            "One page: steering wheel, speed gauge, link, the car's messages; /metrics in Prometheus text format.",
            "HOST is an IPv4 address, [IPv6] or localhost. `carbridge run --dashboard HOST:PORT` sets it for one run.",
        ],
        at: \.dashboard.listen
    ) { scalar throws(ConfigValueError) in
        let text = scalar.stringValue ?? ""
        if text.isEmpty { return nil }
        do {
            return try ListenAddress(parsing: text)
        } catch {
            throw ConfigValueError("\(error)")
        }
    }

    /// `[dashboard] controls`.
    public static let controls: ConfigKey<Bool> = .boolean(
        "dashboard", "controls", default: false,
        doc: "Let browsers drive (Engine, Speed±, Gear, F1-F5, a steering slider); false = view only.",
        details: ["A tab that disconnects or goes silent while steering is lost input: the car stops."],
        at: \.dashboard.controls)

    /// `[dashboard] token`.
    public static let token: ConfigKey<String?> = ConfigKey(
        "dashboard", "token", .string, default: .string(""),
        doc: "The secret a browser presents once (http://HOST:PORT/?token=...) to get controls; \"\" = none.",
        details: [
            "The browser then holds an HttpOnly SameSite=Strict cookie. Required for controls unless listen is a",
            "loopback address (127.0.0.1, [::1], localhost). At least 12 characters, e.g. `openssl rand -hex 16`.",
        ],
        at: \.dashboard.token
    ) { scalar throws(ConfigValueError) in
        let token = scalar.stringValue ?? ""
        if token.isEmpty { return nil }
        guard token.count >= 12, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") }) else {
            throw ConfigValueError(
                "must be at least 12 visible ASCII characters without spaces or ';' (e.g. from `openssl rand -hex 16`)")
        }
        return token
    }

    /// `[dashboard] tls`.
    public static let tls: ConfigKey<DashboardTLS.Mode> = .choice(
        "dashboard", "tls", default: .off,
        doc: "Serve the dashboard over HTTPS: \"off\" (plain HTTP), \"self-signed\", or \"files\" (cert and key).",
        details: [
            "\"self-signed\": a P-256 key and certificate made at the first start and kept in the state directory",
            "($STATE_DIRECTORY, else $XDG_STATE_HOME/carbridge, else ~/.local/state/carbridge); its SHA-256",
            "fingerprint is logged and shown on the page. Phones give a page tilt sensors only over HTTPS.",
        ],
        at: \.dashboard.tlsMode)

    /// `[dashboard] cert`.
    public static let cert: ConfigKey<String?> = pemPath(
        "cert", doc: "With tls = \"files\": the certificate (chain, PEM), e.g. /etc/carbridge/dashboard.crt.",
        at: \.dashboard.certFile)

    /// `[dashboard] key`.
    public static let key: ConfigKey<String?> = pemPath(
        "key", doc: "With tls = \"files\": the certificate's private key (PEM), readable by carbridge only.",
        at: \.dashboard.keyFile)

    /// `[dashboard] allow_http`.
    public static let allowHTTP: ConfigKey<Bool> = .boolean(
        "dashboard", "allow_http", default: false,
        doc: "Allow controls over plain HTTP on a non-loopback address (tls = \"off\"); false = refused.",
        details: ["Over plain HTTP the token travels in clear and phones get no tilt sensors (not a secure context)."],
        at: \.dashboard.allowHTTP)

    /// `[dashboard] camera_url`.
    public static let cameraURL: ConfigKey<CameraURL?> = ConfigKey(
        "dashboard", "camera_url", .string, default: .string(""),
        doc: "The car's camera stream (MJPEG), shown on the page, e.g. \"http://192.168.4.1:81/stream\"; \"\" = none.",
        details: [
            "An absolute http:// or https:// URL. The browser loads it directly (nothing is proxied); the page's",
            "Content-Security-Policy allows images from its origin only. An http:// camera on an HTTPS page is mixed",
            "content: browsers upgrade it to https:// or block it.",
        ],
        at: \.dashboard.cameraURL
    ) { scalar throws(ConfigValueError) in
        let text = scalar.stringValue ?? ""
        if text.isEmpty { return nil }
        do {
            return try CameraURL(parsing: text)
        } catch {
            throw ConfigValueError("\(error)")
        }
    }

    /// `[dashboard] join`.
    public static let join: ConfigKey<CarbridgeConfig.JoinMode> = .choice(
        "dashboard", "join", default: CarbridgeConfig.JoinMode.once,
        doc: "Show a QR code of a one-time join URL (live view and page) that logs a phone in with controls.",
        details: [
            "Shown when controls = true and a token is set. Each code logs in one phone, once.",
            "  \"off\"       no QR code (the token alone)",
            "  \"once\"      every code works once; the next phone scans the next code (default)",
            "  \"per-turn\"  as once, and a joined phone loses control when its kiosk turn ends",
            "              ([kiosk] session_limit_s); a fresh code is shown then",
        ],
        at: \.dashboard.join)

    /// `[dashboard] url`.
    public static let dashboardURL: ConfigKey<String?> = ConfigKey(
        "dashboard", "url", .string, default: .string(""),
        doc: "How phones reach the dashboard (the join URL's start), e.g. \"http://kiosk.local:8080\"; \"\" = guess.",
        details: [
            "SCHEME://HOST[:PORT], no path. \"\" = the listen address if it is a specific one, else this",
            "machine's first non-loopback IPv4 address.",
        ],
        at: \.dashboard.url
    ) { scalar throws(ConfigValueError) in
        let text = scalar.stringValue ?? ""
        if text.isEmpty { return nil }
        return try CarbridgeConfig.Dashboard.validatedURL(text)
    }
    /// `[dashboard] tilt_hz`.
    public static let tiltHz: ConfigKey<Int> = .integer(
        "dashboard", "tilt_hz", default: 20, range: 5...40,
        doc: "How often a phone in tilt or stick mode reports (a second); it re-sends while still, as a heartbeat.",
        details: [
            "A driving phone silent for 500 ms is lost input: the car stops (docs/input.md, Driving from a phone).",
            "At most 40: with the page's pings it stays under the 50 messages a second a tab may send.",
        ],
        at: \.dashboard.tiltHz)

    // MARK: The tables

    /// Every table, in the order the loader reads them and the reference lists them.
    public static let tables: [ConfigTableDeclaration] = [
        ConfigTableDeclaration(
            "link", doc: "Where the car is and how frames reach it.",
            keys: [url, terminator, connectTimeout, maxInFlight, stallTimeout, bleService, bleWrite, bleNotify],
            // ble_service and ble_write name a custom profile together; ble_notify only with them.
            rule: { config in ConfigKeys.bleKeysProblem(config.link) }),
        ConfigTableDeclaration(
            "drive", doc: "The state machine: streaming, speed cap, idle and input-loss policies.",
            keys: [period, hysteresis, maxSpeed, idleTimeout, onInputLost]),
        ConfigTableDeclaration("kiosk", doc: "Policies for an unattended exhibit.", keys: [sessionLimit]),
        ConfigTableDeclaration("car", doc: "What carbridge watches in the car's status lines.", keys: [lowBattery]),
        ConfigTableDeclaration(
            "feedback", doc: "What the pad tells the driver (rumble, a wheel's centring, its light, its battery).",
            keys: [
                rumble, rumbleStrength, centring, lights, lightLinkDown, lightInputRefused, lightBatteryLow, lightDriving,
                lightStopped, lightEngineOff, padLowBattery,
            ]),
        ConfigTableDeclaration(
            "keyboard", doc: "The terminal keyboard (used when stdin is a terminal).", keys: [keyboardEnabled, steerStep]),
        ConfigTableDeclaration(
            "devices", doc: "Which input devices drive.", keys: [gamepad, accelerometer, keyDevice, grab, mappingDB, board]),
        ConfigTableDeclaration(
            "steering", doc: "Stick, wheel or tilt to the steering angle.",
            keys: [
                source, mode, axisX, axisY, deadzone, invert, expo, wheelLock, wheelRange, tiltAxes, neutral, sensitivity,
                smoothing, sampleRate, inputTimeout,
            ],
            rule: { config in
                let steering = config.steering
                guard steering.wheelRangeDegrees > steering.wheelLockDegrees / 2 else { return nil }
                func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
                return (
                    "wheel_range_deg (\(text(steering.wheelRangeDegrees))) is more than half of wheel_lock_deg "
                        + "(\(text(steering.wheelLockDegrees))): the wheel could never reach full steering",
                    [wheelRange.name, wheelLock.name])
            }),
        ConfigTableDeclaration(
            "throttle", doc: "An analog trigger, the tilt's pitch or the board as throttle.",
            keys: [
                throttleAxis, throttleSource, pitchAxes, pitchNeutral, pitchDeadzone, pitchFull, reverse,
                throttleHysteresis, brakeAxis, pedalsInverted,
            ]),
        ConfigTableDeclaration(
            "board", doc: "The Wii Balance Board (hands-free): presence and the centre of pressure.",
            keys: [minWeight, weightHysteresis, boardDeadzone, boardFullScale]),
        ConfigTableDeclaration(
            "handsfree", doc: "Arming and stopping without hands.", keys: [armAfter, engineOffAfter, armTilt]),
        ConfigTableDeclaration(
            "gestures", doc: "Long-press and hold-to-repeat timing.", keys: [longPress, repeatDelay, repeatInterval]),
        ConfigTableDeclaration(
            "dashboard", doc: "The web dashboard and /metrics (off unless listen is set).",
            keys: [listen, controls, token, tls, cert, key, allowHTTP, cameraURL, join, dashboardURL, tiltHz],
            // Controls off loopback need a token and HTTPS (or allow_http); the certificate files must be there;
            // "per-turn" needs turns.
            rule: { config in
                if let problem = config.dashboard.problemAndKeys { return problem }
                return config.joinProblem.map { ($0, [ConfigKeys.join.name]) }
            }),
        ConfigTableDeclaration(
            "buttons",
            doc: "Button (libevdev name, or a D-pad direction like \"ABS_HAT0X-\") = action; deadman = hold to drive.",
            bindings: .init(
                actions: ButtonAction.allCases.map(\.rawValue), defaults: CarbridgeConfig.defaultButtons,
                longPressTable: "long_press",
                longPressDoc: "Bindings that fire only when held for [gestures] long_press_ms, e.g. BTN_MODE = \"calibrate\".")),
    ]

    /// Every key, in reference order.
    public static var all: [any AnyConfigKey] { tables.flatMap(\.keys) }

    // MARK: Helpers for kinds of keys that come up more than once

    /// A `[devices]` matcher: `auto`, `none`, a glob, `vendor:product`, a udev path or an address.
    private static func deviceMatch(
        _ name: String, default value: DeviceMatch, doc: String, details: [String] = [],
        at keyPath: WritableKeyPath<CarbridgeConfig, DeviceMatch> & Sendable
    ) -> ConfigKey<DeviceMatch> {
        ConfigKey("devices", name, .string, default: .string(value.configValue), doc: doc, details: details, at: keyPath) {
            scalar throws(ConfigValueError) in
            let text = scalar.stringValue ?? ""
            if text.isEmpty { return .none }
            let parsed = DeviceMatch(parsing: text)
            if parsed == .unique("") {
                throw ConfigValueError(
                    "\"\(text)\" names no device: give the pad's Bluetooth address (\"e4:17:d8:3a:9c:01\", as `carbridge devices` shows it under uniq) or uniq:SERIAL")
            }
            return parsed
        }
    }

    /// A `[feedback]` light colour, `"#rrggbb"`.
    private static func lightColour(
        _ name: String, default value: String, doc: String,
        at keyPath: WritableKeyPath<CarbridgeConfig, LightColour> & Sendable
    ) -> ConfigKey<LightColour> {
        ConfigKey("feedback", name, .string, default: .string(value), doc: doc, at: keyPath) {
            scalar throws(ConfigValueError) in
            let text = scalar.stringValue ?? ""
            guard let colour = LightColour(hex: text) else {
                throw ConfigValueError("\"\(text)\" is not a colour: write \"#rrggbb\", six hex digits (e.g. \"#ff8000\" for orange)")
            }
            return colour
        }
    }

    /// A `[link]` BLE UUID in any spelling `BLEUARTProfile.normalizedUUID` accepts, kept in BlueZ's spelling
    /// (128-bit, lower case, dashes); `""` (the default) is nil.
    private static func bleUUID(
        _ name: String, doc: String, details: [String] = [],
        at keyPath: WritableKeyPath<CarbridgeConfig, String?> & Sendable
    ) -> ConfigKey<String?> {
        ConfigKey("link", name, .string, default: .string(""), doc: doc, details: details, at: keyPath) {
            scalar throws(ConfigValueError) in
            let text = scalar.stringValue ?? ""
            if text.isEmpty { return nil }
            guard let uuid = BLEUARTProfile.normalizedUUID(text) else {
                throw ConfigValueError(
                    "\"\(text)\" is not a UUID: give a 16-bit one like \"FFE1\" or a 128-bit one like "
                        + "\"6e400002-b5a3-f393-e0a9-e50e24dcca9e\" (\"\" = recognise the module)")
            }
            return uuid
        }
    }

    /// A `[dashboard]` PEM file's path, kept as written (`""`, the default, is nil); the file itself is
    /// checked with the table's rule, where `tls` is known.
    private static func pemPath(
        _ name: String, doc: String, at keyPath: WritableKeyPath<CarbridgeConfig, String?> & Sendable
    ) -> ConfigKey<String?> {
        ConfigKey("dashboard", name, .string, default: .string(""), doc: doc, at: keyPath) { scalar throws(ConfigValueError) in
            let text = scalar.stringValue ?? ""
            return text.isEmpty ? nil : text
        }
    }

    /// An evdev name, kept as written: `MappingConfiguration.resolve` checks it against libevdev once the
    /// whole file is read (whether it must name an axis depends on `steering.source`).
    private static func evdevName(
        _ table: String, _ name: String, default value: String, doc: String, details: [String] = [],
        at keyPath: WritableKeyPath<CarbridgeConfig, String> & Sendable
    ) -> ConfigKey<String> {
        ConfigKey(table, name, .string, default: .string(value), doc: doc, details: details, at: keyPath) {
            $0.stringValue ?? value
        }
    }

    /// `seconds` as a duration rounded to the millisecond; nil for 0 (off).
    private static func durationOrOff(seconds: Double) -> Duration? {
        seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded())) : nil
    }
}
