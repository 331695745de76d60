import DriveCore
import DriveLink

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
        public var gamepad = "auto"
        /// `accelerometer`: as `gamepad`; used when `steering.source = "tilt"`.
        public var accelerometer = "auto"
        /// `keyboard`: extra key devices (arcade buttons, foot pedals): `none` or a matcher.
        public var keyboard = "none"
        /// `grab`: take the gamepad exclusively (EVIOCGRAB) so the desktop ignores it.
        public var grab = false
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
        /// `axis_x`: the horizontal stick axis.
        public var axisX = "ABS_X"
        /// `axis_y`: the vertical stick axis (polar mode).
        public var axisY = "ABS_Y"
        /// `deadzone`: fraction of deflection ignored around centre (0…0.9).
        public var deadzone = 0.1
        /// `invert`: flip the sign of θ.
        public var invert = false
        /// `expo`: 0 linear … 1 fully cubic response.
        public var expo = 0.0
        /// `tilt_axes`: the accelerometer axes whose atan2 is the roll, e.g. `x,z`.
        public var tiltAxes = "x,z"
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
        /// `axis`: e.g. `ABS_RZ`; empty = off (Speed± buttons only).
        public var axis = ""
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
        /// The action as written, e.g. `speed_up`.
        public var action: String
        /// Where it was written.
        public var line: Int?

        /// Creates a binding.
        public init(button: String, action: String, line: Int? = nil) {
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
    /// `[devices]`.
    public var devices = Devices()
    /// `[steering]`.
    public var steering = Steering()
    /// `[throttle]`.
    public var throttle = Throttle()
    /// `[gestures]`.
    public var gestures = Gestures()
    /// `[buttons]`: short-press bindings.
    public var buttons: [Binding] = CarbridgeConfig.defaultButtons
    /// `[buttons.long_press]`: long-press bindings.
    public var longPressButtons: [Binding] = []
    /// The file the config came from (nil for built-in defaults).
    public var file: String?
    /// The line of every `table.key` the file sets (for errors found after parsing).
    public var lines: [String: Int] = [:]

    /// The built-in defaults.
    public init() {}

    /// An Xbox/DualSense-style layout, used when the file has no `[buttons]`.
    public static let defaultButtons: [Binding] = [
        Binding(button: "BTN_START", action: "engine"),
        Binding(button: "BTN_TR", action: "speed_up"),
        Binding(button: "BTN_TL", action: "speed_down"),
        Binding(button: "BTN_NORTH", action: "gear"),
        Binding(button: "BTN_SOUTH", action: "f1"),
        Binding(button: "BTN_EAST", action: "f2"),
        Binding(button: "BTN_WEST", action: "f3"),
        Binding(button: "BTN_THUMBL", action: "f4"),
        Binding(button: "BTN_THUMBR", action: "f5"),
    ]

    /// The actions a button may be bound to.
    public static let actions = [
        "engine", "speed_up", "speed_down", "gear", "f1", "f2", "f3", "f4", "f5", "deadman", "calibrate",
    ]

    /// Parses and validates a config file's text; every problem is a `ConfigError` with file:line.
    public static func parse(text: String, file: String) throws -> CarbridgeConfig {
        let document = try ConfigDocument(text: text, file: file)
        let top = document.top
        var config = CarbridgeConfig()
        config.file = file
        config.lines = document.keyLines

        if let t = try top.table("link") {
            config.link.url = try t.string("url", default: config.link.url)
            if config.link.url.isEmpty { throw t.error("url", "must not be empty (use \"sim\" for the built-in car)") }
            // The same parser `carbridge run` uses, so check-config accepts exactly what run accepts.
            do {
                _ = try LinkURL(parsing: config.link.url)
            } catch {
                throw t.error("url", error.description)
            }
            let names = FrameTerminator.allCases.map(\.name)
            let terminator = try t.string("terminator", default: "lf", allowed: names)
            config.link.terminator = FrameTerminator(name: terminator) ?? .lineFeed
            config.link.connectTimeoutMilliseconds = try t.int(
                "connect_timeout_ms", default: config.link.connectTimeoutMilliseconds, range: 100...120_000)
            config.link.maxInFlight = try t.int("max_in_flight", default: config.link.maxInFlight, range: 1...64)
            config.link.stallTimeoutMilliseconds = try t.int(
                "stall_timeout_ms", default: config.link.stallTimeoutMilliseconds, range: 200...60_000)
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("drive") {
            let period = try t.int("period_ms", default: 50, range: 10...1000)
            config.drive.period = .milliseconds(period)
            config.drive.hysteresisDegrees = try t.double("hysteresis_deg", default: 2, range: 0...20)
            let maxSpeed = try t.int("max_speed", default: 240, range: 10...240)
            if maxSpeed % 10 != 0 {
                throw t.error("max_speed", "\(maxSpeed) is not a multiple of 10 (speeds go in steps of 10)")
            }
            config.drive.maxSpeed = maxSpeed
            let idle = try t.double("idle_timeout_s", default: 0, range: 0...86_400)
            config.drive.idleTimeout = idle > 0 ? .milliseconds(Int64((idle * 1000).rounded())) : nil
            let policy = try t.string(
                "on_input_lost", default: "stop",
                allowed: DriveSettings.InputLossPolicy.allCases.map(\.rawValue))
            config.drive.onInputLost = DriveSettings.InputLossPolicy(rawValue: policy) ?? .stop
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("keyboard") {
            config.keyboard.enabled = try t.bool("enabled", default: true)
            config.keyboard.steerStepDegrees = try t.double("steer_step_deg", default: 20, range: 1...90)
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("devices") {
            config.devices.gamepad = try t.string("gamepad", default: "auto")
            config.devices.accelerometer = try t.string("accelerometer", default: "auto")
            config.devices.keyboard = try t.string("keyboard", default: "none")
            config.devices.grab = try t.bool("grab", default: false)
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("steering") {
            var s = config.steering
            s.source = SteeringSource(
                rawValue: try t.string("source", default: "stick", allowed: SteeringSource.allCases.map(\.rawValue)))
                ?? .stick
            s.mode = StickMode(
                rawValue: try t.string("mode", default: "x", allowed: StickMode.allCases.map(\.rawValue))) ?? .x
            s.axisX = try t.string("axis_x", default: s.axisX)
            s.axisY = try t.string("axis_y", default: s.axisY)
            s.deadzone = try t.double("deadzone", default: s.deadzone, range: 0...0.9)
            s.invert = try t.bool("invert", default: false)
            s.expo = try t.double("expo", default: 0, range: 0...1)
            s.tiltAxes = try t.string("tilt_axes", default: s.tiltAxes)
            let axes = s.tiltAxes.split(separator: ",").map { $0.trimmingSpaces }
            if axes.count != 2 || !axes.allSatisfy({ ["x", "y", "z", "-x", "-y", "-z"].contains($0) }) || axes[0].last == axes[1].last {
                throw t.error("tilt_axes", "\"\(s.tiltAxes)\" must name two different axes, e.g. \"x,z\" or \"-y,z\"")
            }
            s.neutralDegrees = try t.double("neutral_deg", default: 0, range: -180...180)
            s.sensitivity = try t.double("sensitivity", default: 1, range: 0.05...20)
            s.smoothingMilliseconds = try t.double("smoothing_ms", default: s.smoothingMilliseconds, range: 0...5000)
            s.sampleRateHertz = try t.double("sample_rate_hz", default: 50, range: 1...1000)
            s.inputTimeoutMilliseconds = try t.int("input_timeout_ms", default: 500, range: 50...10_000)
            config.steering = s
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("throttle") {
            config.throttle.axis = try t.string("axis", default: "")
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("gestures") {
            config.gestures.longPressMilliseconds = try t.int("long_press_ms", default: 600, range: 100...10_000)
            config.gestures.repeatDelayMilliseconds = try t.int("repeat_delay_ms", default: 0, range: 0...10_000)
            config.gestures.repeatIntervalMilliseconds = try t.int("repeat_interval_ms", default: 150, range: 20...5000)
            try t.rejectUnknownKeys()
        }

        if let t = try top.table("buttons") {
            let longPress = try t.table("long_press")
            config.buttons = try bindings(in: t)
            config.longPressButtons = try longPress.map { try bindings(in: $0) } ?? []
            try longPress?.rejectUnknownKeys()
            try t.rejectUnknownKeys()
        }

        if config.buttons.contains(where: { $0.action == "deadman" })
            || config.longPressButtons.contains(where: { $0.action == "deadman" }) {
            config.drive.deadmanRequired = true
        }
        try top.rejectUnknownKeys()
        return config
    }

    private static func bindings(in table: ConfigTable) throws -> [Binding] {
        try table.stringEntries().map { entry in
            guard actions.contains(entry.value) else {
                throw table.error(
                    entry.key,
                    "unknown action \"\(entry.value)\"; actions are \(actions.joined(separator: ", "))")
            }
            return Binding(button: entry.key, action: entry.value, line: entry.line)
        }
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
