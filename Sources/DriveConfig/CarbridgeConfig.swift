import DriveCore
import DriveInputModel
import DriveLinkModel
import DriveMapping

/// Everything `carbridge.toml` can say, typed and validated. Each key is declared once in `ConfigKeys`
/// (type, default, range, doc); the defaults here are those declarations' `defaultValue`s.
public struct CarbridgeConfig: Sendable {
    /// `[link]`: where the car is.
    public struct Link: Sendable {
        /// `url`: `sim`, `stdout`, `tcp://HOST:PORT`, `serial:///dev/X?baud=N`, `rfcomm://ADDR[/CH]`, `ble://NAME`.
        public var url: String = ConfigKeys.url.defaultValue
        /// `terminator`: what ends each frame.
        public var terminator: FrameTerminator = ConfigKeys.terminator.defaultValue
        /// `connect_timeout_ms`: how long one connection attempt may take.
        public var connectTimeoutMilliseconds: Int = ConfigKeys.connectTimeout.defaultValue
        /// `max_in_flight`: at most this many motion frames in the kernel's output queue (protocol §5.6).
        public var maxInFlight: Int = ConfigKeys.maxInFlight.defaultValue
        /// `stall_timeout_ms`: a kernel queue that does not shrink this long means the link is down (§6).
        public var stallTimeoutMilliseconds: Int = ConfigKeys.stallTimeout.defaultValue

        /// `ble_service`: a BLE car's UART service (normalised UUID); nil = recognise the module.
        public var bleService: String? = ConfigKeys.bleService.defaultValue
        /// `ble_write`: the characteristic frames are written to; set with `bleService`.
        public var bleWrite: String? = ConfigKeys.bleWrite.defaultValue
        /// `ble_notify`: the characteristic the car's lines come from; nil = `bleWrite`.
        public var bleNotify: String? = ConfigKeys.bleNotify.defaultValue

        /// The BLE UART profile the keys name (`custom`, `ble_notify` defaulting to `ble_write`); nil when
        /// `ble_service` and `ble_write` are not both set: the link recognises the module from its services.
        public var bleProfile: BLEUARTProfile? {
            guard let bleService, let bleWrite else { return nil }
            return BLEUARTProfile(name: "custom", service: bleService, write: bleWrite, notify: bleNotify ?? bleWrite)
        }

        /// True when `url` is a `ble://` link (the only kind the BLE keys are for).
        public var isBLE: Bool {
            switch try? LinkURL(parsing: url) {
            case .ble?, .bleDevice?: return true
            default: return false
            }
        }

        /// A notice when BLE keys are set for a link that is not `ble://` (accepted, as keys of an unused
        /// source are, so a `--link` override or a URL saved by the dashboard never makes the file invalid).
        public var unusedBLEKeysNotice: String? {
            let set = [
                (ConfigKeys.bleService.name, bleService), (ConfigKeys.bleWrite.name, bleWrite),
                (ConfigKeys.bleNotify.name, bleNotify),
            ].filter { $0.1 != nil }.map(\.0)
            guard !set.isEmpty, !isBLE else { return nil }
            return "\(set.joined(separator: ", ")) \(set.count == 1 ? "is" : "are") not used: url \(url) is not a ble:// link"
        }

        /// The link's tunables as `DriveLink` takes them.
        public var options: LinkOptions {
            LinkOptions(
                connectTimeout: .milliseconds(connectTimeoutMilliseconds), maxInFlight: maxInFlight,
                stallTimeout: .milliseconds(stallTimeoutMilliseconds), bleProfile: bleProfile)
        }
    }

    /// `[keyboard]`: the terminal keyboard (used when stdin is a TTY).
    public struct Keyboard: Sendable {
        /// `enabled`: read keys from the terminal when stdin is a TTY.
        public var enabled: Bool = ConfigKeys.keyboardEnabled.defaultValue
        /// `steer_step_deg`: how far Left/Right move θ per press.
        public var steerStepDegrees: Double = ConfigKeys.steerStep.defaultValue
    }

    /// `[devices]`: which input devices drive.
    public struct Devices: Sendable {
        /// `gamepad`: `auto` (the first gamepad), `none`, a name glob, `vendor:product`, or a udev path.
        public var gamepad: DeviceMatch = ConfigKeys.gamepad.defaultValue
        /// `accelerometer`: as `gamepad`; used when `steering.source = "tilt"`.
        public var accelerometer: DeviceMatch = ConfigKeys.accelerometer.defaultValue
        /// `keyboard`: extra key devices (arcade buttons, foot pedals): `none` or a matcher.
        public var keyboard: DeviceMatch = ConfigKeys.keyDevice.defaultValue
        /// `grab`: take the gamepad exclusively (EVIOCGRAB) so the desktop ignores it.
        public var grab: Bool = ConfigKeys.grab.defaultValue
        /// `mapping_db`: the user's GameControllerDB file; nil = none.
        public var mappingDB: String? = ConfigKeys.mappingDB.defaultValue
        /// `board`: the balance board; used when a steering or throttle source is `board`.
        public var board: DeviceMatch = ConfigKeys.board.defaultValue
    }

    /// `[dashboard]`: the web dashboard and `/metrics` (off unless `listen` is set).
    public struct Dashboard: Sendable {
        /// `listen`: `HOST:PORT`; nil (`""`, the default) = no dashboard, no server started.
        public var listen: ListenAddress? = ConfigKeys.listen.defaultValue
        /// `controls`: browsers may drive (Engine, Speed±, Gear, F1–F5, steering); false = view only.
        public var controls: Bool = ConfigKeys.controls.defaultValue
        /// `token`: the secret a browser presents once to get controls (then a cookie); required for
        /// controls whenever `listen` is not a loopback address. nil = no token.
        public var token: String? = ConfigKeys.token.defaultValue
        /// `join`: whether a QR code of a one-time join URL is shown, and how long a joined phone keeps control.
        public var join: JoinMode = ConfigKeys.join.defaultValue
        /// `url`: `SCHEME://HOST[:PORT]` phones use to reach the dashboard; nil = worked out at start.
        public var url: String? = ConfigKeys.dashboardURL.defaultValue

        /// The defaults (no dashboard).
        public init() {}

        /// The scheme the dashboard serves (the join URL's, when `url` is not set).
        public var scheme: String { tls.scheme }

        /// True when the join QR code is shown: controls with a token (a join is the token's alternative).
        public var showsJoinCode: Bool { join != .off && controls && token != nil }

        /// `text` as a `url` value (`SCHEME://HOST[:PORT]`, a trailing `/` dropped), or why it is not one.
        public static func validatedURL(_ text: String) throws(ConfigValueError) -> String {
            var rest = Substring(text)
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            let scheme: String
            if rest.hasPrefix("http://") {
                scheme = "http://"
            } else if rest.hasPrefix("https://") {
                scheme = "https://"
            } else {
                throw ConfigValueError("must start with http:// or https:// (e.g. \"http://kiosk.local:8080\")")
            }
            let authority = rest.dropFirst(scheme.count)
            guard !authority.isEmpty,
                authority.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !"/?#@\\\"'<>".utf8.contains($0) })
            else {
                throw ConfigValueError("must be SCHEME://HOST[:PORT] with no path, query or user (e.g. \"http://kiosk.local:8080\")")
            }
            // The port: after `]:` for an [IPv6] host, after the last `:` otherwise.
            let hostEnd = authority.first == "[" ? authority.firstIndex(of: "]") : authority.startIndex
            guard let hostEnd else { throw ConfigValueError("an [IPv6] host needs its closing ]") }
            let colon = authority[hostEnd...].lastIndex(of: ":")
            if let colon {
                guard let number = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(number) else {
                    throw ConfigValueError("the port after the host must be 1-65535")
                }
            }
            guard authority[..<(colon ?? authority.endIndex)].count > 0 else {
                throw ConfigValueError("must be SCHEME://HOST[:PORT]: the host is missing")
            }
            return scheme + authority
        }
        /// `tilt_hz`: how often a driving phone reports, heartbeat included.
        public var tiltHz: Int = ConfigKeys.tiltHz.defaultValue

        /// `tls`: plain HTTP, a self-signed certificate, or `cert` and `key`.
        public var tlsMode: DashboardTLS.Mode = ConfigKeys.tls.defaultValue
        /// `cert`: the certificate (chain) PEM file for `tls = "files"`; nil = none.
        public var certFile: String? = ConfigKeys.cert.defaultValue
        /// `key`: its private key PEM file; nil = none.
        public var keyFile: String? = ConfigKeys.key.defaultValue
        /// `allow_http`: controls over plain HTTP on a non-loopback address are allowed.
        public var allowHTTP: Bool = ConfigKeys.allowHTTP.defaultValue
        /// `camera_url`: the car's camera stream, shown on the page; nil = none.
        public var cameraURL: CameraURL? = ConfigKeys.cameraURL.defaultValue

        /// How the page is served (`tlsMode` with the files; `off` while `files` lacks one of them, which
        /// `problem` reports).
        public var tls: DashboardTLS {
            switch tlsMode {
            case .off: return .off
            case .selfSigned: return .selfSigned
            case .files:
                guard let certFile, let keyFile else { return .off }
                return .files(cert: certFile, key: keyFile)
            }
        }

        /// The problem with this combination, if any (also checked for `run --dashboard`).
        public var problem: String? { problemAndKeys?.message }

        /// The problem with this combination and the keys it is about, if any: a token for controls off
        /// loopback, the certificate files, then controls over plain HTTP off loopback.
        public var problemAndKeys: (message: String, keys: [String])? {
            if controls, let listen, !listen.isLoopback, token == nil {
                return ("controls on a non-loopback address (\(listen)) need a token: set [dashboard] token, or listen on 127.0.0.1",
                        [ConfigKeys.controls.name, ConfigKeys.listen.name])
            }
            if let problem = filesProblem { return problem }
            if controls, let listen, !listen.isLoopback, tlsMode == .off, !allowHTTP {
                return (
                    "controls on a non-loopback address (\(listen)) over plain HTTP: phones get no tilt sensors over plain "
                        + "HTTP (browsers give deviceorientation only to secure contexts) and the token travels in clear: "
                        + "set tls = \"self-signed\" (or cert/key), or allow_http = true",
                    [ConfigKeys.controls.name, ConfigKeys.listen.name, ConfigKeys.tls.name])
            }
            return nil
        }

        /// A warning that does not stop the run: an `http://` camera on an HTTPS page is mixed content.
        public var cameraWarning: String? {
            guard tlsMode != .off, let cameraURL, cameraURL.isPlainHTTP else { return nil }
            return "camera_url \(cameraURL) is http:// on an HTTPS page: mixed content, which browsers upgrade to https:// "
                + "or block (serve the camera over https://, or use tls = \"off\" on a trusted network)"
        }

        private var filesProblem: (message: String, keys: [String])? {
            let cert = ConfigKeys.cert.name
            let key = ConfigKeys.key.name
            switch (tlsMode, certFile, keyFile) {
            case (.files, nil, nil):
                return ("tls = \"files\" needs cert and key (PEM files)", [ConfigKeys.tls.name])
            case (.files, _?, nil):
                return ("cert and key go together: key (the private key's PEM file) is missing", [cert])
            case (.files, nil, _?):
                return ("cert and key go together: cert (the certificate's PEM file) is missing", [key])
            case (.files, let certPath?, let keyPath?):
                if let problem = PEMFile.problem(path: certPath, kind: .certificate) { return ("cert: \(problem)", [cert]) }
                if let problem = PEMFile.problem(path: keyPath, kind: .privateKey) { return ("key: \(problem)", [key]) }
                return nil
            case (_, nil, nil):
                return nil
            default:
                return ("cert and key are read only with tls = \"files\" (tls is \"\(tlsMode.rawValue)\")",
                        [certFile != nil ? cert : key])
            }
        }
    }

    /// `[car]`: what carbridge watches in the car's status lines.
    public struct Car: Sendable {
        /// `low_battery`: the status key and the value below which the car's battery is low; nil = not watched.
        public var lowBattery: LowBatteryRule? = ConfigKeys.lowBattery.defaultValue
    }

    /// `[dashboard] join`: the QR code of a one-time join URL.
    public enum JoinMode: String, CaseIterable, Sendable {
        /// No QR code.
        case off
        /// Every code logs in one phone, once.
        case once
        /// As `once`, and a joined phone loses control when its kiosk turn ends.
        case perTurn = "per-turn"
    }

    /// `[kiosk]`: policies for an unattended exhibit.
    public struct Kiosk: Sendable {
        /// `session_limit_s`: a driver's turn (from the engine going on) ends this long after with the
        /// engine off; the next Engine press starts a new turn. nil (absent or 0) = no limit.
        public var sessionLimit: Duration? = ConfigKeys.sessionLimit.defaultValue
    }

    /// `[feedback]`: what the pad tells the driver.
    public struct Feedback: Sendable {
        /// `rumble`: buzz the pad on engine on, stops, a kiosk turn's end and the speed cap.
        public var rumble: Bool = ConfigKeys.rumble.defaultValue
        /// `strength`: 0…1 of the motors' full strength.
        public var strength: Double = ConfigKeys.rumbleStrength.defaultValue
        /// `centring`: a racing wheel's centring spring while the engine is on, 0…1 of its force; 0 = never.
        public var centring: Double = ConfigKeys.centring.defaultValue
        /// `lights`: show the car's status in the pad's coloured light.
        public var lights: Bool = ConfigKeys.lights.defaultValue
        /// `light_link_down`: the link to the car is down.
        public var lightLinkDown: LightColour = ConfigKeys.lightLinkDown.defaultValue
        /// `light_input_refused`: the car refuses motion while a driving input is lost.
        public var lightInputRefused: LightColour = ConfigKeys.lightInputRefused.defaultValue
        /// `light_battery_low`: this pad's battery is low.
        public var lightBatteryLow: LightColour = ConfigKeys.lightBatteryLow.defaultValue
        /// `light_driving`: engine on, speed above 0.
        public var lightDriving: LightColour = ConfigKeys.lightDriving.defaultValue
        /// `light_stopped`: engine on, speed 0.
        public var lightStopped: LightColour = ConfigKeys.lightStopped.defaultValue
        /// `light_engine_off`: engine off.
        public var lightEngineOff: LightColour = ConfigKeys.lightEngineOff.defaultValue
        /// `pad_low_battery`: a pad's battery at or below this many percent (not charging) is low; 0 = never.
        public var padLowBattery: Int = ConfigKeys.padLowBattery.defaultValue
    }

    /// Where θ comes from.
    public enum SteeringSource: String, CaseIterable, Sendable { case stick, tilt, none, board, wheel }
    /// Where the speed comes from besides Speed±.
    public enum ThrottleSource: String, CaseIterable, Sendable { case trigger, tilt, board }
    /// How a stick becomes θ.
    public enum StickMode: String, CaseIterable, Sendable { case x, polar }

    /// `[steering]`: stick or tilt to θ.
    public struct Steering: Sendable {
        /// `source`: `stick`, `tilt` or `none`.
        public var source: SteeringSource = ConfigKeys.source.defaultValue
        /// `mode`: `x` (horizontal deflection × 90°) or `polar` (the stick's direction).
        public var mode: StickMode = ConfigKeys.mode.defaultValue
        /// `axis_x`: the horizontal stick axis (resolved to its code at load: see `mapping`).
        public internal(set) var axisX: String = ConfigKeys.axisX.defaultValue
        /// `axis_y`: the vertical stick axis (polar mode).
        public internal(set) var axisY: String = ConfigKeys.axisY.defaultValue
        /// `deadzone`: fraction of deflection ignored around centre.
        public var deadzone: Double = ConfigKeys.deadzone.defaultValue
        /// `invert`: flip the sign of θ.
        public var invert: Bool = ConfigKeys.invert.defaultValue
        /// `expo`: 0 linear … 1 fully cubic response.
        public var expo: Double = ConfigKeys.expo.defaultValue
        /// `wheel_lock_deg`: a racing wheel's rotation lock to lock.
        public var wheelLockDegrees: Double = ConfigKeys.wheelLock.defaultValue
        /// `wheel_range_deg`: the wheel angle each side of centre that gives θ = ±90.
        public var wheelRangeDegrees: Double = ConfigKeys.wheelRange.defaultValue
        /// `tilt_axes`: the accelerometer axes whose atan2 is the roll, e.g. `x,z`.
        public var tiltAxes: TiltAxes = ConfigKeys.tiltAxes.defaultValue
        /// `neutral_deg`: the tilt that means straight ahead (`carbridge calibrate` writes it).
        public var neutralDegrees: Double = ConfigKeys.neutral.defaultValue
        /// `sensitivity`: θ = (roll − neutral) × sensitivity.
        public var sensitivity: Double = ConfigKeys.sensitivity.defaultValue
        /// `smoothing_ms`: low-pass time constant for tilt; 0 = off.
        public var smoothingMilliseconds: Double = ConfigKeys.smoothing.defaultValue
        /// `sample_rate_hz`: how often an IIO accelerometer is read.
        public var sampleRateHertz: Double = ConfigKeys.sampleRate.defaultValue
        /// `input_timeout_ms`: an accelerometer silent this long is an input loss.
        public var inputTimeoutMilliseconds: Int = ConfigKeys.inputTimeout.defaultValue
    }

    /// `[throttle]`: an analog trigger as throttle.
    public struct Throttle: Sendable {
        /// `axis`: e.g. `ABS_RZ`; empty = off (Speed± buttons only). Resolved to its code at load.
        public internal(set) var axis: String = ConfigKeys.throttleAxis.defaultValue
        /// `source`: `trigger` (the axis), `tilt` (the pitch) or `board`.
        public var source: ThrottleSource = ConfigKeys.throttleSource.defaultValue
        /// `pitch_axes`: the accelerometer axes whose atan2 is the pitch, e.g. `y,z`.
        public var pitchAxes: TiltAxes = ConfigKeys.pitchAxes.defaultValue
        /// `neutral_deg`: the pitch that means standing still (`carbridge calibrate` writes it).
        public var neutralDegrees: Double = ConfigKeys.pitchNeutral.defaultValue
        /// `deadzone_deg`: pitch around neutral ignored.
        public var deadzoneDegrees: Double = ConfigKeys.pitchDeadzone.defaultValue
        /// `full_deg`: the pitch that gives `max_speed`.
        public var fullDegrees: Double = ConfigKeys.pitchFull.defaultValue
        /// `reverse`: leaning back drives backwards.
        public var reverse: Bool = ConfigKeys.reverse.defaultValue
        /// `hysteresis`: the margin past a speed step's boundary, as a fraction of a step (every analog throttle).
        public var hysteresis: Double = ConfigKeys.throttleHysteresis.defaultValue
        /// `brake_axis`: a brake pedal; empty = none. Resolved to its code at load.
        public internal(set) var brakeAxis: String = ConfigKeys.brakeAxis.defaultValue
        /// `invert`: the throttle and brake axes report their maximum at rest.
        public var invert: Bool = ConfigKeys.pedalsInverted.defaultValue
    }

    /// `[board]`: the balance board.
    public struct Board: Sendable {
        /// `min_weight_kg`: from this weight a rider is present.
        public var minimumWeightKilograms: Double = ConfigKeys.minWeight.defaultValue
        /// `weight_hysteresis_kg`: gone only below the minimum minus this.
        public var weightHysteresisKilograms: Double = ConfigKeys.weightHysteresis.defaultValue
        /// `deadzone`: centre of pressure ignored around the middle (fraction of the half-width).
        public var deadzone: Double = ConfigKeys.boardDeadzone.defaultValue
        /// `full_scale`: the centre of pressure that gives full lock or `max_speed`.
        public var fullScale: Double = ConfigKeys.boardFullScale.defaultValue
    }

    /// `[handsfree]`: arming and stopping without hands.
    public struct HandsFree: Sendable {
        /// `arm_after_s`: still this long arms.
        public var armAfterSeconds: Double = ConfigKeys.armAfter.defaultValue
        /// `engine_off_after_s`: the engine goes off this long after stepping off.
        public var engineOffAfterSeconds: Double = ConfigKeys.engineOffAfter.defaultValue
        /// `arm_tilt`: a tilt rig arms too (opt-in).
        public var armTilt: Bool = ConfigKeys.armTilt.defaultValue
    }

    /// `[gestures]`: long-press and hold-to-repeat timing.
    public struct Gestures: Sendable {
        /// `long_press_ms`: how long a press must last to count as long.
        public var longPressMilliseconds: Int = ConfigKeys.longPress.defaultValue
        /// `repeat_delay_ms`: hold Speed± this long to start repeating; 0 = no repeat.
        public var repeatDelayMilliseconds: Int = ConfigKeys.repeatDelay.defaultValue
        /// `repeat_interval_ms`: the repeat period.
        public var repeatIntervalMilliseconds: Int = ConfigKeys.repeatInterval.defaultValue
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
    public var link: Link = Link()
    /// `[drive]`, as state-machine settings.
    public var drive: DriveSettings = DriveSettings(
        period: ConfigKeys.period.defaultValue, hysteresisDegrees: ConfigKeys.hysteresis.defaultValue,
        maxSpeed: ConfigKeys.maxSpeed.defaultValue, idleTimeout: ConfigKeys.idleTimeout.defaultValue,
        onInputLost: ConfigKeys.onInputLost.defaultValue)
    /// `[keyboard]`.
    public var keyboard: Keyboard = Keyboard()
    /// `[kiosk]`.
    public var kiosk: Kiosk = Kiosk()
    /// `[feedback]`.
    public var feedback: Feedback = Feedback()
    /// `[devices]`.
    public var devices: Devices = Devices()
    /// `[steering]`.
    public var steering: Steering = Steering()
    /// `[throttle]`.
    public var throttle: Throttle = Throttle()
    /// `[board]`.
    public var board: Board = Board()
    /// `[handsfree]`.
    public var handsfree: HandsFree = HandsFree()
    /// `[gestures]`.
    public var gestures: Gestures = Gestures()
    /// `[dashboard]`.
    public var dashboard: Dashboard = Dashboard()
    /// `[car]`.
    public var car: Car = Car()

    /// The problem with `[dashboard] join`, if any: "per-turn" ends a phone's control with the kiosk turn,
    /// so without turns it would silently be "once".
    public var joinProblem: String? {
        guard dashboard.join == .perTurn, kiosk.sessionLimit == nil else { return nil }
        return "join = \"per-turn\" needs [kiosk] session_limit_s (a turn to end); use \"once\" without a turn limit"
    }
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
        var config = CarbridgeConfig()
        config.file = file
        config.lines = document.keyLines
        var errors = ConfigReader.read(document.top, into: &config)
        errors += MappingConfiguration.resolve(&config, resolver: resolver)
        if !errors.isEmpty { throw ConfigErrors(errors) }
        return config
    }
}
