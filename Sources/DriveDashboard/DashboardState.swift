import DriveBluetooth
import DriveCore
import DriveSystem
import DriveView

/// One published state of the run for the browsers: the live view's `RunSnapshot` plus what only the
/// dashboard shows (the last frames, when the link retries, the speed cap). Built on the event loop (a
/// copy of values, no formatting); turned into JSON on the web side (`json(now:)`), once per version.
package struct DashboardState: Sendable {
    /// What the live view shows.
    package var run: RunSnapshot
    /// The most recent frames handed to the link, oldest first.
    package var recentFrames: [(frame: Frame, time: Instant)]
    /// While the link is down: when it tries again.
    package var retryAt: Instant?
    /// `drive.max_speed`.
    package var maxSpeed: Int
    /// The Bluetooth search.
    package var bluetooth: BluetoothSearchState
    /// Who drives from a browser ("phone 2 (Android)"), if anyone.
    package var driver: String?

    /// Creates a state.
    package init(
        run: RunSnapshot, recentFrames: [(frame: Frame, time: Instant)] = [], retryAt: Instant? = nil, maxSpeed: Int = 240,
        bluetooth: BluetoothSearchState = BluetoothSearchState(), driver: String? = nil
    ) {
        self.driver = driver
        self.run = run
        self.bluetooth = bluetooth
        self.recentFrames = recentFrames
        self.retryAt = retryAt
        self.maxSpeed = maxSpeed
    }

    /// What makes a snapshot urgent for `SnapshotCoalescer`.
    package var coalescingKey: SnapshotCoalescer.Key {
        SnapshotCoalescer.Key(engineOn: run.state.engineOn, link: run.linkStatus, speed: run.state.speed)
    }

    /// The link's state word: `up`, `connecting`, `down`, `closed`.
    package var linkWord: String {
        let status = run.linkStatus
        if status.hasPrefix("down") { return "down" }
        return status
    }

    /// `{"type":"state",…}`; instants become wall-clock `HH:MM:SS.mmm` through `timeText`, and the retry
    /// as milliseconds from `now`.
    package func json(now: Instant, timeText: (Instant) -> String = WallClock.timeOfDay) -> String {
        let s = run.state
        var out = JSONWriter()
        out.field("type", "state")
        out.field("engine", s.engineOn)
        out.field("speed", s.speed)
        out.field("maxSpeed", maxSpeed)
        out.field("direction", s.direction)
        out.field("angle", (s.angleDegrees * 10).rounded() / 10)
        out.field("range", s.range)
        out.field("deadman", s.deadmanHeld)
        out.field("link", linkWord)
        out.field("linkName", run.linkName)
        var reason = ""
        if run.linkStatus.hasPrefix("down: ") { reason = String(run.linkStatus.dropFirst(6)) }
        out.field("reason", reason)
        if let retryAt, linkWord == "down" {
            out.field("retryMs", max(0, Int(retryAt.duration(since: now).nanoseconds / 1_000_000)))
        }
        out.field("framesSent", run.framesSent)
        out.array("frames", recentFrames.reversed()) { w, item in
            w.field("text", item.frame.text)
            w.field("time", timeText(item.time))
        }
        out.array("car", run.carLines) { w, line in
            w.field("time", timeText(line.time))
            w.field("text", line.text)
        }
        // The car's status table (only once it said something), each value with its age, so the page can
        // dim one the car stopped sending; and the battery warning while it stands.
        if !run.carStatus.isEmpty {
            out.array("status", run.carStatus.entries) { w, entry in
                w.field("key", entry.key)
                w.field("value", entry.value)
                w.field("ageMs", max(0, Int(now.duration(since: entry.time).nanoseconds / 1_000_000)))
            }
        }
        if let warning = run.batteryWarning { out.field("batteryWarning", warning) }
        if !run.padBatteryWarnings.isEmpty { out.stringArray("padBatteryWarnings", run.padBatteryWarnings) }
        out.stringArray("inputs", run.inputs)
        out.field("driver", driver ?? "")
        if let handsFree = run.handsFree {
            // The rider, for the kiosk operator: the arming state, the pitch, the board's dot in its square.
            out.object("handsFree") { w in
                w.field("arming", handsFree.arming.rawValue)
                if let pitch = handsFree.pitchDegrees { w.field("pitch", pitch) }
                if let weight = handsFree.weightKilograms { w.field("weight", weight) }
                if let x = handsFree.centreX, let y = handsFree.centreY {
                    w.field("copX", x)
                    w.field("copY", y)
                }
            }
        }
        out.stringArray("notices", run.notices)
        // What the pad's rumble told the driver, so the operator sees it too.
        out.array("feedback", run.feedback) { w, item in
            w.field("time", timeText(item.time))
            w.field("event", item.event.name)
            w.field("text", item.event.text)
        }
        out.object("bt") { w in
            w.field("phase", bluetooth.phase.rawValue)
            w.field("message", bluetooth.message)
            if let saved = bluetooth.saved { w.field("saved", saved) }
            w.array("devices", bluetooth.devices) { d, device in
                d.field("addr", device.address)
                if let name = device.name { d.field("name", name) }
                if let rssi = device.rssi { d.field("rssi", rssi) }
                d.field("paired", device.paired)
                d.field("serial", device.serialPort)
                if !device.transports.isEmpty { d.field("transport", device.transports.description) }
                if let profile = device.profile { d.field("profile", profile.uartLabel) }
                // What *Use this car* saves, worked out here so the page and the pick agree.
                d.field("url", bluetooth.linkURL(for: device))
            }
        }
        return out.finish()
    }
}

/// Builds one JSON object by hand (no Foundation): fields in order, strings escaped.
struct JSONWriter {
    private var text = "{"
    private var first = true

    mutating func field(_ key: String, _ value: String) {
        key_(key)
        Self.appendString(value, to: &text)
    }

    mutating func field(_ key: String, _ value: Int) {
        key_(key)
        text += String(value)
    }

    mutating func field(_ key: String, _ value: Double) {
        key_(key)
        text += value.isFinite ? String(value) : "null"
    }

    mutating func field(_ key: String, _ value: Bool) {
        key_(key)
        text += value ? "true" : "false"
    }

    mutating func stringArray(_ key: String, _ values: [String]) {
        key_(key)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            Self.appendString(value, to: &text)
        }
        text += "]"
    }

    mutating func array<S: Sequence>(_ key: String, _ items: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        key_(key)
        text += "["
        var firstItem = true
        for item in items {
            if !firstItem { text += "," }
            firstItem = false
            var inner = JSONWriter()
            body(&inner, item)
            text += inner.finish()
        }
        text += "]"
    }

    mutating func object(_ key: String, _ body: (inout JSONWriter) -> Void) {
        key_(key)
        var inner = JSONWriter()
        body(&inner)
        text += inner.finish()
    }

    mutating func finish() -> String {
        text += "}"
        return text
    }

    private mutating func key_(_ key: String) {
        if !first { text += "," }
        first = false
        Self.appendString(key, to: &text)
        text += ":"
    }

    /// `value` as a JSON string literal (control characters, quotes, backslashes, and `<` escaped).
    static func appendString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "<": text += "\\u003c"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    /// A small object with string fields only (hello, rejected).
    static func object(_ fields: [(String, String)], flags: [(String, Bool)] = []) -> String {
        var writer = JSONWriter()
        for (key, value) in fields { writer.field(key, value) }
        for (key, value) in flags { writer.field(key, value) }
        return writer.finish()
    }
}
