import DriveCore
import DriveView
import XCTest

@testable import DriveTerminal

/// The live view with the dashboard's join code: the URL line, the QR code beside the other lines.
final class RunViewJoinTests: XCTestCase {
    let code = ["████", "█▀▄█", "█  █"]

    func screenLines(_ snapshot: RunSnapshot, columns: Int, rows: Int) -> [String] {
        let screen = RunView.render(snapshot, columns: columns, rows: rows)
        return screen.dropFirst("\u{1B}[H\u{1B}[2J".count).split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
    }

    func testTheCodeIsDrawnBesideTheViewInItsOwnColours() {
        var snapshot = RunSnapshot(linkName: "tcp://car:23", linkStatus: "up")
        XCTAssertFalse(RunView.render(snapshot).contains("Join"), "no join: no line")
        snapshot.join = JoinInvitation(url: "http://10.0.0.2:8080/join?code=abc", lines: code)
        let lines = screenLines(snapshot, columns: 60, rows: 24)
        XCTAssertEqual(lines[1], "Join from a phone: http://10.0.0.2:8080/join?code=abc")
        let left = 60 - 4 - 2
        for (index, row) in code.enumerated() {
            let line = lines[2 + index]
            XCTAssertTrue(line.hasSuffix(RunView.joinColours + row + RunView.resetColours), line)
            XCTAssertEqual(line.count, left + 2 + RunView.joinColours.count + row.count + RunView.resetColours.count, line)
        }
        XCTAssertTrue(lines[2].hasPrefix("─"), lines[2])
        XCTAssertTrue(lines[3].hasPrefix("Engine off"), lines[3])
    }

    func testATooSmallScreenSaysSo() {
        var snapshot = RunSnapshot(linkName: "tcp://car:23", linkStatus: "up")
        snapshot.join = JoinInvitation(url: "http://10.0.0.2:8080/join?code=abc", lines: code)
        let lines = screenLines(snapshot, columns: 33, rows: 24)
        XCTAssertTrue(lines[2].hasPrefix("(the join QR code needs"), lines[2])
        XCTAssertFalse(lines.joined().contains("▀"))
    }
}

extension RunViewJoinTests {
    func testTheKeysLineStaysOnAFullScreen() {
        var snapshot = RunSnapshot(linkName: "tcp://car:23", linkStatus: "up", notices: (0..<40).map { "notice \($0)" })
        snapshot.join = JoinInvitation(url: "http://10.0.0.2:8080/join?code=abc", lines: code)
        let lines = screenLines(snapshot, columns: 80, rows: 24).filter { !$0.isEmpty }
        snapshot.join = nil
        let without = screenLines(snapshot, columns: 80, rows: 24).filter { !$0.isEmpty }
        XCTAssertLessThanOrEqual(lines.count, 24)
        XCTAssertEqual(lines.last, without.last, "the last line is the keys, as without a code")
    }
}
