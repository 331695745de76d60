import DriveCore
import DriveView
import XCTest

@testable import DriveDashboard

final class DashboardStateTests: XCTestCase {
    func testJSON() {
        let t = Instant(nanoseconds: 5_000_000_000)
        var run = RunSnapshot(
            state: DriveState(engineOn: true, speed: 40, direction: 1, angleDegrees: 33.333, range: 1),
            linkName: "tcp://127.0.0.1:7000", linkStatus: "down: refused \"x\"")
        run.carLines = [(t, "BAT 7.4V <ok>\\")]
        run.framesSent = 3
        run.inputs = ["keyboard"]
        run.feedback = [(t, .engineOn), (t, .stopped)]
        let state = DashboardState(
            run: run, recentFrames: [(Frame(kind: .forward, range: 0, speed: 40, direction: 1), t)],
            retryAt: t.advanced(by: .milliseconds(1500)), maxSpeed: 120)
        let json = state.json(now: t.advanced(by: .milliseconds(500)), timeText: { _ in "12:00:00.000" })
        XCTAssertEqual(
            json,
            #"{"type":"state","engine":true,"speed":40,"maxSpeed":120,"direction":1,"angle":33.3,"range":1,"deadman":false,"link":"down","linkName":"tcp://127.0.0.1:7000","reason":"refused \"x\"","retryMs":1000,"framesSent":3,"frames":[{"text":"M,0,40,1","time":"12:00:00.000"}],"car":[{"time":"12:00:00.000","text":"BAT 7.4V \u003cok>\\"}],"inputs":["keyboard"],"driver":"","notices":[],"feedback":[{"time":"12:00:00.000","event":"engineOn","text":"engine on"},{"time":"12:00:00.000","event":"stopped","text":"stopped: link or input lost"}],"bt":{"phase":"idle","message":"","devices":[]}}"#)
    }

    func testControlCharactersAreEscaped() {
        var text = ""
        JSONWriter.appendString("a\u{1}b\u{2028}", to: &text)
        XCTAssertEqual(text, #""a\u0001b\u2028""#)
    }
}
