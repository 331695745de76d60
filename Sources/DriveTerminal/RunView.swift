import DriveCore
import DriveSystem
import DriveView

/// Renders the one-screen live view of `carbridge run` (pure: snapshot in, text out).
public enum RunView {
    /// The screen for `snapshot`, sized for `columns` × `rows`, with ANSI home/clear.
    /// `timeText` turns the snapshot's instants into what a person reads (local `HH:MM:SS.mmm`).
    public static func render(
        _ snapshot: RunSnapshot, columns: Int = 80, rows: Int = 24,
        timeText: (Instant) -> String = WallClock.timeOfDay
    ) -> String {
        let s = snapshot.state
        var lines: [String] = []
        lines.append("carbridge — \(snapshot.linkName)  [\(snapshot.linkStatus)]")
        lines.append(String(repeating: "─", count: max(10, min(columns, 78))))
        let engine = s.engineOn ? "ON " : "off"
        let gear = s.direction == 1 ? "forward" : "reverse"
        lines.append("Engine \(engine)   Speed \(pad(s.speed, 3))   Gear \(gear)")
        let angle = (s.angleDegrees * 10).rounded() / 10
        lines.append("Angle \(angle)°   Range \(s.range)   \(gauge(s.angleDegrees))")
        if let last = snapshot.lastFrame {
            lines.append("Last frame \(last.frame.text)  at \(timeText(last.time))   (\(snapshot.framesSent) sent)")
        } else {
            lines.append("Last frame —   (\(snapshot.framesSent) sent)")
        }
        lines.append("Inputs: " + (snapshot.inputs.isEmpty ? "none" : snapshot.inputs.joined(separator: ", ")))
        if let rider = snapshot.handsFree { lines.append(riderLine(rider)) }
        if !snapshot.carStatus.isEmpty { lines.append("Car status: \(snapshot.carStatus.summary)") }
        if let warning = snapshot.batteryWarning { lines.append("!! \(warning)") }
        for warning in snapshot.padBatteryWarnings { lines.append("!! \(warning)") }
        lines.append("")
        lines.append("From the car:")
        // The join URL takes a line of its own (`withJoin`).
        let budget = max(3, rows - lines.count - 6 - (snapshot.join == nil ? 0 : 1))
        let carLines = snapshot.carLines.suffix(budget / 2 + 1)
        if carLines.isEmpty { lines.append("  (nothing yet)") }
        for line in carLines { lines.append("  \(timeText(line.time))  \(line.text)") }
        lines.append("Notices:")
        let notices = snapshot.notices.suffix(max(1, budget - carLines.count))
        if notices.isEmpty { lines.append("  (none)") }
        for notice in notices { lines.append("  \(notice)") }
        lines.append("")
        lines.append(KeyboardControls.help)
        let clipped = snapshot.join.map { withJoin($0, beside: lines, columns: columns, rows: rows) }
            ?? lines.prefix(rows).map { clip($0, columns) }
        return "\u{1B}[H\u{1B}[2J" + clipped.joined(separator: "\r\n") + "\r\n"
    }

    /// Light glyphs on a dark background, whatever the terminal's theme: the QR code's colours.
    static let joinColours = "\u{1B}[97;40m"
    /// Back to the terminal's colours.
    static let resetColours = "\u{1B}[0m"

    /// The screen with the dashboard's join code: the title, `Join from a phone: URL`, then the view's
    /// other lines on the left and the QR code on the right (in its own colours). A screen too small for
    /// the code shows the URL line only, and says so.
    static func withJoin(_ join: JoinInvitation, beside lines: [String], columns: Int, rows: Int) -> [String] {
        var head = [clip(lines.first ?? "", columns), clip("Join from a phone: \(join.url)", columns)]
        let codeWidth = join.lines.first?.count ?? 0
        let left = columns - codeWidth - 2
        guard left >= 30, join.lines.count + head.count <= rows else {
            head.append(clip("(the join QR code needs \(codeWidth + 32)×\(join.lines.count + 2) characters)", columns))
            return Array((head + lines.dropFirst().map { clip($0, columns) }).prefix(rows))
        }
        var body = Array(lines.dropFirst())
        if body.count < join.lines.count { body += Array(repeating: "", count: join.lines.count - body.count) }
        for (index, text) in body.enumerated() where head.count < rows {
            guard index < join.lines.count else {
                head.append(clip(text, columns))
                continue
            }
            let shown = clip(text, left)
            let padding = String(repeating: " ", count: max(0, left - shown.count) + 2)
            head.append(shown + padding + joinColours + join.lines[index] + resetColours)
        }
        return head
    }

    /// The hands-free rider: `Rider armed   60.0 kg   CoP x +0.00 y +0.30   pitch +12.5°` (what is known).
    static func riderLine(_ rider: HandsFreeReading) -> String {
        var parts = ["Rider \(rider.arming.rawValue)"]
        if let weight = rider.weightKilograms { parts.append("\(weight) kg") }
        if let x = rider.centreX, let y = rider.centreY { parts.append("CoP x \(signed(x)) y \(signed(y))") }
        if let pitch = rider.pitchDegrees { parts.append("pitch \(signed(pitch))°") }
        return parts.joined(separator: "   ")
    }

    /// `+0.3`, `-12.5`, `+0.0`.
    private static func signed(_ value: Double) -> String { (value < 0 ? "" : "+") + "\(value)" }

    /// A steering gauge: `[----|----]` with a marker where θ points.
    static func gauge(_ angleDegrees: Double, width: Int = 19) -> String {
        let clamped = min(90, max(-90, angleDegrees))
        let position = Int(((clamped + 90) / 180 * Double(width - 1)).rounded())
        var cells = Array(repeating: Character("-"), count: width)
        cells[width / 2] = "|"
        cells[position] = "●"
        return "L[" + String(cells) + "]R"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func clip(_ line: String, _ columns: Int) -> String {
        line.count <= columns ? line : String(line.prefix(max(1, columns - 1))) + "…"
    }
}
