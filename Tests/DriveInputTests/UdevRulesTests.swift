import DriveTestSupport
import Foundation
import Glibc
import XCTest

/// `udev/70-carbridge.rules`' pad-light rules: well-formed udev syntax, the kernel names they match (the ones
/// hid-playstation and hid-sony make, and no lock or player light), and their commands run on a fixture LED.
final class UdevRulesTests: XCTestCase {
    private static let rulesFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("udev/70-carbridge.rules")

    /// One rule: its `KEY==`/`KEY+=`/`KEY=` pairs in order.
    private struct Rule {
        var pairs: [(key: String, op: String, value: String)]
        func values(_ key: String) -> [String] { pairs.filter { $0.key == key }.map(\.value) }
    }

    /// Parses a rule line as udev does (`KEY{attr}OP"value"`, separated by commas); nil when malformed.
    private static func parse(_ line: String) -> Rule? {
        var rest = Substring(line)
        var pairs: [(String, String, String)] = []
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard !rest.isEmpty else { break }
            let key = rest.prefix { $0.isLetter || $0 == "_" || $0 == "{" || $0 == "}" || $0.isNumber || $0 == "/" }
            rest = rest.dropFirst(key.count)
            let op = rest.prefix { "=!+-:".contains($0) }
            guard !key.isEmpty, ["==", "!=", "=", "+=", "-=", ":="].contains(String(op)) else { return nil }
            rest = rest.dropFirst(op.count)
            guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else { return nil }
            pairs.append((String(key), String(op), String(rest[rest.index(after: rest.startIndex)..<end])))
            rest = rest[rest.index(after: end)...]
            guard rest.isEmpty || rest.first == "," else { return nil }
        }
        return pairs.isEmpty ? nil : Rule(pairs: pairs)
    }

    private func ledRules() throws -> [Rule] {
        let text = try String(contentsOf: Self.rulesFile, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("SUBSYSTEM==\"leds\"") }
        let rules = lines.compactMap(Self.parse)
        XCTAssertEqual(rules.count, lines.count, "every LED rule parses: \(lines)")
        return rules
    }

    /// The names `rule`'s KERNEL matches among `names` (udev's `|` alternatives, fnmatch globs).
    private func matched(by rule: Rule, among names: [String]) -> [String] {
        let patterns = rule.values("KERNEL").flatMap { $0.split(separator: "|").map(String.init) }
        return names.filter { name in patterns.contains { fnmatch($0, name, 0) == 0 } }
    }

    func testTheLightRulesMatchTheDriversLEDsAndNoOthers() throws {
        let rules = try ledRules()
        XCTAssertEqual(rules.count, 2, "brightness, and a multicolor LED's multi_intensity")
        let names = [
            "input7:rgb:indicator", "0003:054C:05C4.0003:red", "0003:054C:05C4.0003:green", "0005:054C:09CC.0004:blue",
            "0003:054C:05C4.0003:global", "input7:white:player-1", "input3::capslock", "xpad0",
            "0005:057E:2009.0001:green:player-1", "0003:046D:C24F.0001:red",
        ]
        XCTAssertEqual(matched(by: rules[0], among: names), Array(names.prefix(5)))
        XCTAssertEqual(rules[0].values("TEST"), ["brightness"])
        XCTAssertEqual(matched(by: rules[1], among: names), ["input7:rgb:indicator"])
        XCTAssertEqual(rules[1].values("TEST"), ["multi_intensity"], "only where the file is: a DS4's LEDs have none")
        for rule in rules {
            XCTAssertEqual(rule.pairs.first?.key, "SUBSYSTEM")
            XCTAssertFalse(rule.values("RUN").isEmpty)
            for command in rule.values("RUN") {
                XCTAssertTrue(command.hasPrefix("/bin/sh -c '") && command.hasSuffix("'"), command)
                XCTAssertFalse(command.contains("$"), "no $: udev would substitute it")
            }
        }
    }

    func testTheCommandsGiveTheGroupWriteAccessToTheFilesTheTestFinds() throws {
        let sysfs = try PadSysfsFixture()
        let bar = try sysfs.addDualSense() + "/leds/input7:rgb:indicator"
        let red = try sysfs.addDualShock4() + "/leds/0003:054C:05C4.0003:red"
        let group = String(cString: getgrgid(getgid())!.pointee.gr_name)
        for led in [bar, red] {
            for file in ["brightness", "multi_intensity"] where FileManager.default.fileExists(atPath: "\(led)/\(file)") {
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(led)/\(file)")
            }
        }
        for rule in try ledRules() {
            for (led, name) in [(bar, "input7:rgb:indicator"), (red, "0003:054C:05C4.0003:red")] {
                guard !matched(by: rule, among: [name]).isEmpty,
                      rule.values("TEST").allSatisfy({ FileManager.default.fileExists(atPath: "\(led)/\($0)") })
                else { continue }
                for command in rule.values("RUN") {
                    // udev's %p is the devpath: /sys%p is the LED's directory; the test's own group stands for carbridge's.
                    let script = String(command.dropFirst("/bin/sh -c '".count).dropLast())
                        .replacingOccurrences(of: "/sys%p", with: led).replacingOccurrences(of: "chgrp carbridge", with: "chgrp \(group)")
                    let shell = Process()
                    shell.executableURL = URL(fileURLWithPath: "/bin/sh")
                    shell.arguments = ["-c", script]
                    try shell.run()
                    shell.waitUntilExit()
                    XCTAssertEqual(shell.terminationStatus, 0, script)
                }
            }
        }
        func mode(_ path: String) throws -> Int {
            try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        XCTAssertEqual(try mode(bar + "/brightness"), 0o664)
        XCTAssertEqual(try mode(bar + "/multi_intensity"), 0o664)
        XCTAssertEqual(try mode(red + "/brightness"), 0o664)
        XCTAssertFalse(FileManager.default.fileExists(atPath: red + "/multi_intensity"))
        XCTAssertEqual(try mode(bar.replacingOccurrences(of: "rgb:indicator", with: "white:player-1") + "/brightness"), 0o644,
                       "a player LED is not the rules' business")
    }
}
