import DriveCore
import DriveMapping
import DriveWebProtocol

/// Makes a browser that drives an input device like any other (docs/protocol.md §6), and lets one drive at a
/// time.
///
/// The first tab that steers (the slider's `steer`, a phone's `tilt` or `stick`) becomes the driver; while it
/// drives, every other tab's drive controls (steer, tilt, stick, straight, Engine, Speed±, Gear, F-keys) are
/// refused with a reason naming the driver. Engine, Speed±, Gear and the F-keys alone do not make a tab the
/// driver, and with no driver anyone may press them. The driver is lost input — `.inputLost`, so the car stops
/// as for an unplugged pad — when it disconnects, says `release` (hidden or closed), or goes silent: a slider for
/// `timeout` (its page pings every 250 ms), a phone for `phoneTimeout` (`[steering] input_timeout_ms`, the
/// silence rule of every accelerometer). A phone's input is its reports, not its pings (a tab whose timers are
/// throttled in the background still pings), and a tilt report counts only when its sensor fired since the
/// phone's previous one (the page's `seq`, a count of its sensor events, moved): the page re-sends the last
/// orientation as a heartbeat when nothing moved, and a sensor that stopped (permission revoked, a fault) must
/// not keep the last angle and speed alive. A stick report always counts (the touch screen is that input's
/// sensor, and a thumb held still fires nothing). The next tab that steers then becomes the driver, with
/// `.inputRestored` before its first control, as a re-plugged pad would.
///
/// It also keeps each phone's `PhoneTilt` (its own neutral) and `PhoneStick` (the speed's rest rule). Pure:
/// time is passed in, and it lives on the event loop with the machine.
package struct SteeringGuard: Sendable {
    /// What kind of input the driver uses now.
    package enum Kind: Hashable, Sendable {
        /// The page's steering slider.
        case slider
        /// A phone's tilt or thumb stick.
        case phone
    }

    /// The tab that drives.
    package struct Driver: Hashable, Sendable {
        /// Its connection.
        package var client: Int
        /// Who it is, for the other tabs ("phone 2 (Android)").
        package var label: String
        /// Its input now.
        package var kind: Kind
        /// Its silence rule: every accelerometer's `SampleWatchdog`, fed with what counts as its input (a
        /// slider's message, a stick report, a tilt report with a fresh sensor event).
        package var watchdog: SampleWatchdog
        /// When its page last reported at all (a tilt report whose sensor had not fired included): tells a
        /// silent sensor from a silent page.
        package var lastReport: Instant
    }

    /// Why the driver was lost to silence.
    package enum Silence: Hashable, Sendable {
        /// Nothing came from the page (backgrounded, frozen, a dead connection).
        case page
        /// The page kept reporting, but its tilt sensor fired no event.
        case sensor
    }

    /// The last driver lost to silence, and which silence.
    package struct SilenceLoss: Hashable, Sendable {
        /// Its connection.
        package var client: Int
        /// What went silent.
        package var silence: Silence
    }

    /// What a message comes to.
    package struct Outcome: Hashable, Sendable {
        /// The controls to apply, in order.
        package var controls: [Control]
        /// Why the message was refused (nil: it was not).
        package var refusal: String?

        /// Creates an outcome.
        package init(_ controls: [Control] = [], refusal: String? = nil) {
            self.controls = controls
            self.refusal = refusal
        }
    }

    /// What a phone's tilt and stick are mapped with.
    package struct PhoneSettings: Hashable, Sendable {
        /// The `[steering]` tunables for tilt.
        package var tilt: PhoneTilt.Settings
        /// `[drive] max_speed`: the stick's full travel.
        package var maxSpeed: Int
        /// `[throttle] hysteresis`.
        package var hysteresis: Double
        /// `[steering] input_timeout_ms`: a driving phone whose input is silent this long is lost input.
        package var inputTimeout: Duration

        /// Creates settings (the config's defaults).
        package init(
            tilt: PhoneTilt.Settings = .init(), maxSpeed: Int = 240, hysteresis: Double = SpeedSteps.defaultHysteresis,
            inputTimeout: Duration = .milliseconds(500)
        ) {
            self.tilt = tilt
            self.maxSpeed = maxSpeed
            self.hysteresis = hysteresis
            self.inputTimeout = inputTimeout
        }
    }

    /// Silence longer than this from a driving slider tab is lost input.
    package let timeout: Duration
    /// Silence longer than this from a driving phone (no tilt or stick report) is lost input.
    package let phoneTimeout: Duration
    /// How phones are mapped.
    package let phoneSettings: PhoneSettings
    /// The tab that drives, if any.
    package private(set) var driver: Driver?
    /// This guard reported the input lost and nothing restored it yet.
    package private(set) var lost = false
    /// The driver the last `tick` found silent (nil until one was).
    package private(set) var lastSilence: SilenceLoss?
    private var tilts: [Int: PhoneTilt] = [:]
    /// Each phone's last tilt `seq` (its page's count of sensor events).
    private var sensorSequences: [Int: Int] = [:]
    private var sticks: [Int: PhoneStick] = [:]

    /// Creates a guard: 1 s of silence for the slider by default, the phone's `inputTimeout` for a phone.
    package init(timeout: Duration = .seconds(1), phone: PhoneSettings = .init()) {
        self.timeout = timeout
        self.phoneTimeout = phone.inputTimeout
        self.phoneSettings = phone
    }

    /// True when some tab drives now.
    package var hasSteeringClient: Bool { driver != nil }

    /// True when `client` drives now.
    package func isSteering(_ client: Int) -> Bool { driver?.client == client }

    /// `client`'s stick, if it has used one.
    package func stick(of client: Int) -> PhoneStick? { sticks[client] }

    /// A valid message from `client` with controls, at `now`: the controls to apply, in order (refusals give none).
    package mutating func received(_ message: ClientMessage, from client: Int, at now: Instant) -> [Control] {
        receive(message, from: client, label: "tab \(client)", at: now).controls
    }

    /// A valid message from `client` (called `label` where others are told who drives) at `now`.
    package mutating func receive(_ message: ClientMessage, from client: Int, label: String, at now: Instant) -> Outcome {
        if var current = driver, current.client == client, current.kind == .slider {
            // Any message keeps a slider tab alive (its page pings); a phone only by its reports.
            current.watchdog.sample(at: now)
            current.lastReport = now
            driver = current
        }
        switch message {
        case .ping, .bluetoothScan, .bluetoothPick:
            return Outcome()
        case .release:
            guard driver?.client == client else { return Outcome() }
            driver = nil
            return Outcome(loseInput())
        case .straight:
            if let refusal = refusal(for: client) { return Outcome(refusal: refusal) }
            tilts[client]?.straighten()
            return Outcome()
        case .control(let control):
            if let refusal = refusal(for: client) { return Outcome(refusal: refusal) }
            guard case .steer = control else { return Outcome([control]) }
            return Outcome(take(client, label: label, kind: .slider, at: now) + [control])
        case .tilt(let reading):
            // Whether the sensor fired since this phone's previous report, refused or not.
            let sensorFired = sensorSequences[client] != reading.sequence
            sensorSequences[client] = reading.sequence
            if let refusal = refusal(for: client) { return Outcome(refusal: refusal) }
            guard sensorFired else {
                // The heartbeat of a phone whose sensor did not fire: its page is alive, its input is not.
                if var current = driver, current.client == client {
                    current.lastReport = now
                    driver = current
                }
                return Outcome()
            }
            var controls = take(client, label: label, kind: .phone, at: now)
            var tilt = tilts[client] ?? PhoneTilt(settings: phoneSettings.tilt)
            if let theta = tilt.update(reading, at: now) { controls.append(.steer(theta)) }
            tilts[client] = tilt
            return Outcome(controls)
        case .stick(let reading):
            if let refusal = refusal(for: client) { return Outcome(refusal: refusal) }
            var controls = take(client, label: label, kind: .phone, at: now)
            var stick = sticks[client] ?? PhoneStick(maxSpeed: phoneSettings.maxSpeed, hysteresis: phoneSettings.hysteresis)
            controls += stick.update(reading)
            sticks[client] = stick
            return Outcome(controls)
        }
    }

    /// `client` disconnected at `now`.
    package mutating func disconnected(_ client: Int, at now: Instant) -> [Control] {
        tilts[client] = nil
        sticks[client] = nil
        sensorSequences[client] = nil
        guard driver?.client == client else { return [] }
        driver = nil
        return loseInput()
    }

    /// The instant the driver's silence becomes lost input, if a tab drives.
    package var nextDeadline: Instant? {
        driver?.watchdog.deadline
    }

    /// Checks the driver's silence at `now` (a loss is recorded in `lastSilence`).
    package mutating func tick(at now: Instant) -> [Control] {
        guard var current = driver, current.watchdog.expire(at: now) else { return [] }
        let reporting = current.kind == .phone && now.duration(since: current.lastReport) < silenceLimit(current.kind)
        lastSilence = SilenceLoss(client: current.client, silence: reporting ? .sensor : .page)
        driver = nil
        return loseInput()
    }

    /// The drive state's speed after controls were applied: a stick that asked for a speed while the car
    /// stands (stopped by something else: lost input, engine off, the link) must come back to rest first.
    package mutating func observe(speed: Int) {
        guard speed == 0 else { return }
        for client in sticks.keys { sticks[client]?.carStopped(speed: speed) }
    }

    private func silenceLimit(_ kind: Kind) -> Duration { kind == .slider ? timeout : phoneTimeout }

    /// Why `client` may not drive now (another tab drives), or nil.
    private func refusal(for client: Int) -> String? {
        guard let driver, driver.client != client else { return nil }
        return "\(driver.label) is driving: wait for your turn"
    }

    /// `client` steers at `now`: it drives from now on (it may already); the input is back if it was lost.
    private mutating func take(_ client: Int, label: String, kind: Kind, at now: Instant) -> [Control] {
        // The same tab with the same input keeps its watchdog; a new driver, or a new kind of input (its own
        // silence limit), starts a fresh one.
        var watchdog = driver.flatMap { $0.client == client && $0.kind == kind ? $0.watchdog : nil }
            ?? SampleWatchdog(timeout: silenceLimit(kind))
        watchdog.sample(at: now)
        driver = Driver(client: client, label: driver?.label ?? label, kind: kind, watchdog: watchdog, lastReport: now)
        guard lost else { return [] }
        lost = false
        return [.inputRestored]
    }

    private mutating func loseInput() -> [Control] {
        lost = true
        for client in sticks.keys { sticks[client]?.stopped() }
        for client in tilts.keys { tilts[client]?.reset() }
        return [.inputLost]
    }
}

/// Caps how many messages one tab may send (a token bucket: `burst` at once, `perSecond` sustained);
/// the rest are rejected and never reach the loop. Pure.
package struct MessageRateLimit: Sendable {
    /// Sustained messages per second.
    package let perSecond: Double
    /// The most at once.
    package let burst: Double
    private var tokens: Double
    private var last: Instant?

    /// Creates a limit (50 a second, bursts of 50 by default: the page sends at most about 25).
    package init(perSecond: Double = 50, burst: Double = 50) {
        self.perSecond = perSecond
        self.burst = burst
        self.tokens = burst
    }

    /// True when a message arriving at `now` is within the limit (and counts it).
    package mutating func allow(at now: Instant) -> Bool {
        if let last {
            let seconds = Double(now.duration(since: last).nanoseconds) / 1e9
            tokens = min(burst, tokens + max(0, seconds) * perSecond)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
