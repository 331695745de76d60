import DriveCore
import DriveLink
import DriveMapping

/// Everything `carbridge.toml` can say, typed and validated, with the defaults of `config/carbridge.toml`.
public struct CarbridgeConfig: Sendable {
    /// `[link]`: where the car is.
    public struct Link: Sendable {
        /// `url`: `sim`, `stdout`, `tcp://HOST:PORT`, `serial:///dev/X?baud=N`, `rfcomm://ADDR[/CH]`.
        public var url = "sim"
        /// `terminator`: what ends each frame.
        public var terminator = FrameTerminator.lineFeed
        /// `connect_timeout_ms`: how long one connection attempt may take.
        public var connectTimeoutMilliseconds = 5000
        /// `max_in_flight`: at most this many motion frames in the kernel's output queue (protocol §5.6).
        public var maxInFlight = 2
        /// `stall_timeout_ms`: a kernel queue that does not shrink this long means the link is down (§6).
        public var stallTimeoutMilliseconds = 1000

        /// The link's tunables as `DriveLink` takes them.
        public var options: LinkOptions {
            LinkOptions(
                connectTimeout: .milliseconds(connectTimeoutMilliseconds), maxInFlight: maxInFlight,
                stallTimeout: .milliseconds(stallTimeoutMilliseconds))
        }
    }

    /// `[keyboard]`: the terminal keyboard (used when stdin is a TTY).
    public struct Keyboard: Sendable {
        /// `enabled`: read keys from the terminal when stdin is a TTY.
        public var enabled = true
        /// `steer_step_deg`: how far Left/Right move θ per press.
        public var steerStepDegrees = 20.0
    }

    /// `[devices]`: which input devices drive.
    public struct Devices: Sendable {
        /// `gamepad`: `auto` (the first gamepad), `none`, a name glob, `vendor:product`, or a udev path.
        public var gamepad = DeviceMatch.auto
        /// `accelerometer`: as `gamepad`; used when `steering.source = "tilt"`.
        public var accelerometer = DeviceMatch.auto
        /// `keyboard`: extra key devices (arcade buttons, foot pedals): `none` or a matcher.
        public var keyboard = DeviceMatch.none
        /// `grab`: take the gamepad exclusively (EVIOCGRAB) so the desktop ignores it.
        public var grab = false
    }

    /// `[dashboard]`: the web dashboard and `/metrics` (off unless `listen` is set).
    public struct Dashboard: Sendable {
        /// `listen`: `HOST:PORT`; nil (`""`, the default) = no dashboard, no server started.
        public var listen: ListenAddress?
        /// `controls`: browsers may drive (Engine, Speed±, Gear, F1–F5, steering); false = view only.
        public var controls = false
        /// `token`: the secret a browser presents once to get controls (then a cookie); required for
        /// controls whenever `listen` is not a loopback address. nil = no token.
        public var token: String?

        /// The problem with this combination, if any (also checked for `run --dashboard`).
        public var problem: String? {
            guard controls, let listen, !listen.isLoopback, token == nil else { return nil }
            return "controls on a non-loopback address (\(listen)) need a token: set [dashboard] token, or listen on 127.0.0.1"
        }
    }

    /// `[kiosk]`: policies for an unattended exhibit.
    public struct Kiosk: Sendable {
        /// `session_limit_s`: a driver's turn (from the engine going on) ends this long after with the
        /// engine off; the next Engine press starts a new turn. nil (absent or 0) = no limit.
        public var sessionLimit: Duration?
    }

    /// Where θ comes from.
    public enum SteeringSource: String, CaseIterable, Sendable { case stick, tilt, none }
    /// How a stick becomes θ.
    public enum StickMode: String, CaseIterable, Sendable { case x, polar }

    /// `[steering]`: stick or tilt to θ.
    public struct Steering: Sendable {
        /// `source`: `stick`, `tilt` or `none`.
        public var source = SteeringSource.stick
        /// `mode`: `x` (horizontal deflection × 90°) or `polar` (the stick's direction).
        public var mode = StickMode.x
        /// `axis_x`: the horizontal stick axis (resolved to its code at load: see `mapping`).
        public internal(set) var axisX = "ABS_X"
        /// `axis_y`: the vertical stick axis (polar mode).
        public internal(set) var axisY = "ABS_Y"
        /// `deadzone`: fraction of deflection ignored around centre (0…0.9).
        public var deadzone = 0.1
        /// `invert`: flip the sign of θ.
        public var invert = false
        /// `expo`: 0 linear … 1 fully cubic response.
        public var expo = 0.0
        /// `tilt_axes`: the accelerometer axes whose atan2 is the roll, e.g. `x,z`.
        public var tiltAxes = TiltAxes(lateral: .init(.x), vertical: .init(.z))!
        /// `neutral_deg`: the tilt that means straight ahead (`carbridge calibrate` writes it).
        public var neutralDegrees = 0.0
        /// `sensitivity`: θ = (roll − neutral) × sensitivity.
        public var sensitivity = 1.0
        /// `smoothing_ms`: low-pass time constant for tilt; 0 = off.
        public var smoothingMilliseconds = 80.0
        /// `sample_rate_hz`: how often an IIO accelerometer is read.
        public var sampleRateHertz = 50.0
        /// `input_timeout_ms`: an accelerometer silent this long is an input loss.
        public var inputTimeoutMilliseconds = 500
    }

    /// `[throttle]`: an analog trigger as throttle.
    public struct Throttle: Sendable {
        /// `axis`: e.g. `ABS_RZ`; empty = off (Speed± buttons only). Resolved to its code at load.
        public internal(set) var axis = ""
    }

    /// `[gestures]`: long-press and hold-to-repeat timing.
    public struct Gestures: Sendable {
        /// `long_press_ms`: how long a press must last to count as long.
        public var longPressMilliseconds = 600
        /// `repeat_delay_ms`: hold Speed± this long to start repeating; 0 = no repeat.
        public var repeatDelayMilliseconds = 0
        /// `repeat_interval_ms`: the repeat period.
        public var repeatIntervalMilliseconds = 150
    }

    /// One `[buttons]` (or `[buttons.long_press]`) entry.
    public struct Binding: Hashable, Sendable {
        /// The button name as written, e.g. `BTN_SOUTH` or `ABS_HAT0X-`.
        public var button: String
        /// The action, e.g. `speed_up`.
        public var action: ButtonAction
        /// Where it was written.
        public var line: Int?

        /// Creates a binding.
        public init(button: String, action: ButtonAction, line: Int? = nil) {
            self.button = button
            self.action = action
            self.line = line
        }
    }

    /// `[link]`.
    public var link = Link()
    /// `[drive]`, as state-machine settings.
    public var drive = DriveSettings()
    /// `[keyboard]`.
    public var keyboard = Keyboard()
    /// `[kiosk]`.
    public var kiosk = Kiosk()
    /// `[devices]`.
    public var devices = Devices()
    /// `[steering]`.
    public var steering = Steering()
    /// `[throttle]`.
    public var throttle = Throttle()
    /// `[gestures]`.
    public var gestures = Gestures()
    /// `[dashboard]`.
    public var dashboard = Dashboard()
    /// `[buttons]`: short-press bindings (resolved at load: see `mapping`).
    public internal(set) var buttons: [Binding] = CarbridgeConfig.defaultButtons
    /// `[buttons.long_press]`: long-press bindings.
    public internal(set) var longPressButtons: [Binding] = []
    /// The evdev names of the input sections, resolved when the file was loaded; `mapperSettings` is built
    /// from it and the typed values above.
    public internal(set) var mapping = MappingConfiguration()
    /// The file the config came from (nil for built-in defaults).
    public var file: String?
    /// The line of every `table.key` the file sets (for errors found after parsing).
    public var lines: [String: Int] = [:]

    /// The built-in defaults, names not resolved yet: only the loader makes configs.
    init() {}

    /// The built-in defaults (no file), with their evdev names resolved by `resolver`.
    /// (No TOML is parsed: TOMLKit leaks a little per document, see scripts/fuzz.sh.)
    public static func defaults(resolver: any EventCodeResolver) throws(ConfigErrors) -> CarbridgeConfig {
        var config = CarbridgeConfig()
        let errors = MappingConfiguration.resolve(&config, resolver: resolver)
        if !errors.isEmpty { throw ConfigErrors(errors) }
        return config
    }

    /// An Xbox/DualSense-style layout, used when the file has no `[buttons]`.
    public static let defaultButtons: [Binding] = [
        Binding(button: "BTN_START", action: .engine),
        Binding(button: "BTN_TR", action: .speedUp),
        Binding(button: "BTN_TL", action: .speedDown),
        Binding(button: "BTN_NORTH", action: .gear),
        Binding(button: "BTN_SOUTH", action: .f1),
        Binding(button: "BTN_EAST", action: .f2),
        Binding(button: "BTN_WEST", action: .f3),
        Binding(button: "BTN_THUMBL", action: .f4),
        Binding(button: "BTN_THUMBR", action: .f5),
    ]

    /// Parses and validates a config file's text, resolving evdev names with `resolver`; throws the first
    /// problem in file order (`load` gives them all).
    public static func parse(
        text: String, file: String, resolver: any EventCodeResolver
    ) throws(ConfigError) -> CarbridgeConfig {
        do {
            return try load(text: text, file: file, resolver: resolver)
        } catch {
            throw error.first
        }
    }

    /// Reads, parses and validates the config file at `path`; every problem is reported (an unreadable
    /// file is one `ConfigError` without a line).
    public static func load(file path: String, resolver: any EventCodeResolver) throws(ConfigErrors) -> CarbridgeConfig {
        let text: String
        do {
            text = try ConfigFileEditor.read(path)
        } catch {
            throw ConfigErrors([error])
        }
        return try load(text: text, file: path, resolver: resolver)
    }

    /// Parses and validates a config file's text once into typed values, resolving the evdev names of
    /// the input sections with `resolver`. Every problem is collected (each key and table goes on after
    /// one) and all are thrown together in file order, each a `ConfigError` with file:line; only a TOML
    /// syntax error stops at once.
    public static func load(
        text: String, file: String, resolver: any EventCodeResolver
    ) throws(ConfigErrors) -> CarbridgeConfig {
        let document: ConfigDocument
        do {
            document = try ConfigDocument(text: text, file: file)
        } catch {
            throw ConfigErrors([error])
        }
        let problems = Problems()
        var config = CarbridgeConfig()
        config.file = file
        config.lines = document.keyLines
        read(document.top, into: &config, problems)
        problems.errors += MappingConfiguration.resolve(&config, resolver: resolver)
        if !problems.errors.isEmpty { throw ConfigErrors(problems.errors) }
        return config
    }

    /// The problems found so far; a getter that throws leaves the value at its default.
    private final class Problems {
        var errors: [ConfigError] = []

        func take<T>(_ fallback: T, _ read: () throws(ConfigError) -> T) -> T {
            do {
                return try read()
            } catch {
                errors.append(error)
                return fallback
            }
        }

        func table(_ parent: ConfigTable, _ key: String) -> ConfigTable? {
            take(nil) { () throws(ConfigError) in try parent.table(key) }
        }

        /// Unknown keys of `table`, once everything was read.
        func finish(_ table: ConfigTable) {
            errors += table.unknownKeyErrors()
        }
    }

    private static func read(_ top: ConfigTable, into config: inout CarbridgeConfig, _ p: Problems) {
        if let t = p.table(top, "link") {
            let url = p.take(config.link.url) { () throws(ConfigError) in
                let url = try t.string("url", default: "sim")
                if url.isEmpty { throw t.error("url", "must not be empty (use \"sim\" for the built-in car)") }
                // The same parser `carbridge run` uses, so check-config accepts exactly what run accepts.
                do {
                    _ = try LinkURL(parsing: url)
                } catch {
                    throw t.error("url", "\(error)")
                }
                return url
            }
            config.link.url = url
            let names = FrameTerminator.allCases.map(\.name)
            let terminator = p.take("lf") { () throws(ConfigError) in try t.string("terminator", default: "lf", allowed: names) }
            config.link.terminator = FrameTerminator(name: terminator) ?? .lineFeed
            config.link.connectTimeoutMilliseconds = p.take(5000) { () throws(ConfigError) in
                try t.int("connect_timeout_ms", default: 5000, range: 100...120_000)
            }
            config.link.maxInFlight = p.take(2) { () throws(ConfigError) in try t.int("max_in_flight", default: 2, range: 1...64) }
            config.link.stallTimeoutMilliseconds = p.take(1000) { () throws(ConfigError) in
                try t.int("stall_timeout_ms", default: 1000, range: 200...60_000)
            }
            p.finish(t)
        }

        if let t = p.table(top, "drive") {
            let period = p.take(50) { () throws(ConfigError) in try t.int("period_ms", default: 50, range: 10...1000) }
            config.drive.period = .milliseconds(period)
            config.drive.hysteresisDegrees = p.take(2) { () throws(ConfigError) in
                try t.double("hysteresis_deg", default: 2, range: 0...20)
            }
            config.drive.maxSpeed = p.take(240) { () throws(ConfigError) in
                let maxSpeed = try t.int("max_speed", default: 240, range: 10...240)
                if maxSpeed % 10 != 0 {
                    throw t.error("max_speed", "\(maxSpeed) is not a multiple of 10 (speeds go in steps of 10)")
                }
                return maxSpeed
            }
            let idle = p.take(0) { () throws(ConfigError) in try t.double("idle_timeout_s", default: 0, range: 0...86_400) }
            config.drive.idleTimeout = idle > 0 ? .milliseconds(Int64((idle * 1000).rounded())) : nil
            let policy = p.take("stop") { () throws(ConfigError) in
                try t.string(
                    "on_input_lost", default: "stop", allowed: DriveSettings.InputLossPolicy.allCases.map(\.rawValue))
            }
            config.drive.onInputLost = DriveSettings.InputLossPolicy(rawValue: policy) ?? .stop
            p.finish(t)
        }

        if let t = p.table(top, "kiosk") {
            let limit = p.take(0) { () throws(ConfigError) in
                let seconds = try t.double("session_limit_s", default: 0, range: 0...86_400)
                if seconds > 0 && seconds < 1 {
                    throw t.error(
                        "session_limit_s", "\(seconds) is too short: a turn lasts at least 1 s (0 = no limit; the value is in seconds)")
                }
                return seconds
            }
            config.kiosk.sessionLimit = limit > 0 ? .milliseconds(Int64((limit * 1000).rounded())) : nil
            p.finish(t)
        }

        if let t = p.table(top, "keyboard") {
            config.keyboard.enabled = p.take(true) { () throws(ConfigError) in try t.bool("enabled", default: true) }
            config.keyboard.steerStepDegrees = p.take(20) { () throws(ConfigError) in
                try t.double("steer_step_deg", default: 20, range: 1...90)
            }
            p.finish(t)
        }

        if let t = p.table(top, "devices") {
            func match(_ key: String, _ fallback: DeviceMatch) -> DeviceMatch {
                p.take(fallback) { () throws(ConfigError) in
                    let text = try t.string(key, default: fallback.configValue)
                    if text.isEmpty { return .none }
                    let parsed = DeviceMatch(parsing: text)
                    if parsed == .unique("") {
                        throw t.error(key, "\"\(text)\" names no device: give the pad's Bluetooth address (\"e4:17:d8:3a:9c:01\", as `carbridge devices` shows it under uniq) or uniq:SERIAL")
                    }
                    return parsed
                }
            }
            config.devices.gamepad = match("gamepad", .auto)
            config.devices.accelerometer = match("accelerometer", .auto)
            config.devices.keyboard = match("keyboard", .none)
            config.devices.grab = p.take(false) { () throws(ConfigError) in try t.bool("grab", default: false) }
            p.finish(t)
        }

        if let t = p.table(top, "steering") {
            var s = config.steering
            let source = p.take("stick") { () throws(ConfigError) in
                try t.string("source", default: "stick", allowed: SteeringSource.allCases.map(\.rawValue))
            }
            s.source = SteeringSource(rawValue: source) ?? .stick
            let mode = p.take("x") { () throws(ConfigError) in
                try t.string("mode", default: "x", allowed: StickMode.allCases.map(\.rawValue))
            }
            s.mode = StickMode(rawValue: mode) ?? .x
            s.axisX = p.take(s.axisX) { () throws(ConfigError) in try t.string("axis_x", default: "ABS_X") }
            s.axisY = p.take(s.axisY) { () throws(ConfigError) in try t.string("axis_y", default: "ABS_Y") }
            s.deadzone = p.take(s.deadzone) { () throws(ConfigError) in try t.double("deadzone", default: 0.1, range: 0...0.9) }
            s.invert = p.take(false) { () throws(ConfigError) in try t.bool("invert", default: false) }
            s.expo = p.take(0) { () throws(ConfigError) in try t.double("expo", default: 0, range: 0...1) }
            s.tiltAxes = p.take(s.tiltAxes) { () throws(ConfigError) in
                let text = try t.string("tilt_axes", default: "x,z")
                guard let axes = TiltAxes(parsing: text) else {
                    throw t.error("tilt_axes", "\"\(text)\" must name two different axes, e.g. \"x,z\" or \"-y,z\"")
                }
                return axes
            }
            s.neutralDegrees = p.take(0) { () throws(ConfigError) in try t.double("neutral_deg", default: 0, range: -180...180) }
            s.sensitivity = p.take(1) { () throws(ConfigError) in try t.double("sensitivity", default: 1, range: 0.05...20) }
            s.smoothingMilliseconds = p.take(s.smoothingMilliseconds) { () throws(ConfigError) in
                try t.double("smoothing_ms", default: 80, range: 0...5000)
            }
            s.sampleRateHertz = p.take(50) { () throws(ConfigError) in
                try t.double("sample_rate_hz", default: 50, range: 1...1000)
            }
            s.inputTimeoutMilliseconds = p.take(500) { () throws(ConfigError) in
                try t.int("input_timeout_ms", default: 500, range: 50...10_000)
            }
            config.steering = s
            p.finish(t)
        }

        if let t = p.table(top, "throttle") {
            config.throttle.axis = p.take("") { () throws(ConfigError) in try t.string("axis", default: "") }
            p.finish(t)
        }

        if let t = p.table(top, "gestures") {
            config.gestures.longPressMilliseconds = p.take(600) { () throws(ConfigError) in
                try t.int("long_press_ms", default: 600, range: 100...10_000)
            }
            config.gestures.repeatDelayMilliseconds = p.take(0) { () throws(ConfigError) in
                try t.int("repeat_delay_ms", default: 0, range: 0...10_000)
            }
            config.gestures.repeatIntervalMilliseconds = p.take(150) { () throws(ConfigError) in
                try t.int("repeat_interval_ms", default: 150, range: 20...5000)
            }
            p.finish(t)
        }

        if let t = p.table(top, "dashboard") {
            config.dashboard.listen = p.take(nil) { () throws(ConfigError) -> ListenAddress? in
                let text = try t.string("listen", default: "")
                if text.isEmpty { return nil }
                do {
                    return try ListenAddress(parsing: text)
                } catch {
                    throw t.error("listen", "\(error)")
                }
            }
            config.dashboard.controls = p.take(false) { () throws(ConfigError) in try t.bool("controls", default: false) }
            config.dashboard.token = p.take(nil) { () throws(ConfigError) -> String? in
                let token = try t.string("token", default: "")
                if token.isEmpty { return nil }
                guard token.count >= 12, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") }) else {
                    throw t.error("token", "must be at least 12 visible ASCII characters without spaces or ';' (e.g. from `openssl rand -hex 16`)")
                }
                return token
            }
            if let problem = config.dashboard.problem {
                p.errors.append(t.error(t.line(of: "controls") != nil ? "controls" : "listen", problem))
            }
            p.finish(t)
        }

        if let t = p.table(top, "buttons") {
            let longPress = p.table(t, "long_press")
            config.buttons = bindings(in: t, p, skipping: "long_press")
            config.longPressButtons = longPress.map { bindings(in: $0, p) } ?? []
            if let longPress { p.finish(longPress) }
            p.finish(t)
        }

        if (config.buttons + config.longPressButtons).contains(where: { $0.action == .deadman }) {
            config.drive.deadmanRequired = true
        }
        p.finish(top)
    }

    /// The entries of `[buttons]` or `[buttons.long_press]` whose action is known; the others are problems.
    /// (`skipping` a key read as something else: `long_press`, reported already when it is not a table.)
    private static func bindings(in table: ConfigTable, _ p: Problems, skipping skipped: String? = nil) -> [Binding] {
        table.stringEntries { p.errors.append($0) }.filter { $0.key != skipped }.compactMap { entry in
            guard let action = ButtonAction(rawValue: entry.value) else {
                p.errors.append(table.error(
                    entry.key,
                    "unknown action \"\(entry.value)\"; actions are \(ButtonAction.allCases.map(\.rawValue).joined(separator: ", "))"))
                return nil
            }
            return Binding(button: entry.key, action: action, line: entry.line)
        }
    }
}
