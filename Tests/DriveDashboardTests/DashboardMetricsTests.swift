import XCTest

@testable import DriveDashboard

/// `/metrics` as a Prometheus user reads it: every family says what it means.
final class DashboardMetricsTests: XCTestCase {
    /// The families named by the rendered text's `# TYPE` and `# HELP` lines, with the help texts.
    private func families(_ text: String) -> (types: [String], help: [String: String], helpBeforeType: Bool) {
        var types: [String] = []
        var help: [String: String] = [:]
        var helpBeforeType = true
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard words.count >= 3, words[0] == "#" else { continue }
            let name = String(words[2])
            if words[1] == "TYPE" {
                types.append(name)
                if help[name] == nil { helpBeforeType = false }
            } else if words[1] == "HELP" {
                help[name] = words.count > 3 ? String(words[3]) : ""
            }
        }
        return (types, help, helpBeforeType)
    }

    func testEveryFamilyHasAHelpLine() {
        let text = DashboardMetrics().render()
        let (types, help, helpBeforeType) = families(text)
        XCTAssertEqual(types.count, DashboardMetrics.help.count, "one # TYPE line per declared family in\n\(text)")
        for name in types {
            let line = help[name]
            XCTAssertNotNil(line, "\(name) has no # HELP line in\n\(text)")
            XCTAssertFalse(line?.trimmingCharacters(in: .whitespaces).isEmpty ?? true, "\(name)'s # HELP is empty")
        }
        XCTAssertTrue(helpBeforeType, "each # HELP comes before its family's # TYPE:\n\(text)")
        XCTAssertEqual(Set(help.keys), Set(types), "no help text for a family that is not rendered")
    }

    func testTheHelpTextIsTheDeclaredOne() {
        let (_, help, _) = families(DashboardMetrics().render())
        XCTAssertEqual(help["carbridge_link_up"], DashboardMetrics.help["carbridge_link_up"])
        XCTAssertEqual(help["carbridge_frames_sent_total"], DashboardMetrics.help["carbridge_frames_sent_total"])
    }
}
