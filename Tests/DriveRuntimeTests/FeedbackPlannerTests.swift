import DriveCore
import DriveInput
import DriveRuntime
import XCTest

/// Which rumble cue plays on which bridge event, at exact instants.
final class FeedbackPlannerTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 1_000_000_000)

    private func state(engine: Bool, speed: Int = 0) -> DriveState {
        var state = DriveState()
        state.engineOn = engine
        state.speed = speed
        return state
    }

    func testEachBridgeEventGetsItsCue() {
        var planner = FeedbackPlanner(maxSpeed: 30, sessionLimit: nil)
        XCTAssertEqual(planner.handle(.link(up: true), at: t0), [], "the link coming up is not news")
        XCTAssertEqual(planner.handle(.state(state(engine: false)), at: t0), [])
        XCTAssertEqual(planner.handle(.state(state(engine: true)), at: t0), [.engineOn], "engine on: one short")
        XCTAssertEqual(planner.handle(.state(state(engine: true)), at: t0), [], "only the change")
        XCTAssertEqual(planner.handle(.state(state(engine: true, speed: 20)), at: t0), [])
        XCTAssertEqual(planner.handle(.applied(.speedUp), at: t0), [], "below the cap")
        XCTAssertEqual(planner.handle(.state(state(engine: true, speed: 30)), at: t0), [])
        XCTAssertEqual(planner.handle(.applied(.speedUp), at: t0), [.speedCapped], "Speed+ at max_speed: very short")
        XCTAssertEqual(planner.handle(.applied(.gear), at: t0), [])
        XCTAssertEqual(planner.handle(.applied(.inputLost), at: t0), [.stopped], "input lost: one long")
        XCTAssertEqual(planner.handle(.link(up: false), at: t0), [.stopped], "link lost: one long")
        XCTAssertEqual(planner.handle(.link(up: false), at: t0), [], "still down: nothing more")
        XCTAssertNil(planner.nextDeadline, "no kiosk turn")
    }

    func testAKioskTurnWarnsTenSecondsBeforeItsEnd() {
        var planner = FeedbackPlanner(maxSpeed: 240, sessionLimit: .seconds(180))
        XCTAssertEqual(planner.handle(.state(state(engine: true)), at: t0), [.engineOn])
        let warning = t0.advanced(by: .seconds(170))
        XCTAssertEqual(planner.nextDeadline, warning)
        XCTAssertEqual(planner.tick(at: warning.advanced(by: .milliseconds(-1))), [])
        XCTAssertEqual(planner.tick(at: warning), [.turnEnding], "two short, 10 s before the end")
        XCTAssertNil(planner.nextDeadline)
        XCTAssertEqual(planner.tick(at: warning.advanced(by: .seconds(1))), [], "once")

        // The engine going off before the warning cancels it; the next turn arms a new one.
        XCTAssertEqual(planner.handle(.state(state(engine: false)), at: warning), [])
        let next = warning.advanced(by: .seconds(20))
        XCTAssertEqual(planner.handle(.state(state(engine: true)), at: next), [.engineOn])
        XCTAssertEqual(planner.handle(.state(state(engine: false)), at: next.advanced(by: .seconds(5))), [])
        XCTAssertNil(planner.nextDeadline)
        XCTAssertEqual(planner.tick(at: next.advanced(by: .seconds(170))), [])
    }

    /// `answers(_:)` lets the run's view model skip the planner for controls (a steering report) that never
    /// call for a cue: for every other control, in every state the planner can be in, `handle` says nothing.
    func testOnlyTheControlsItAnswersCallForACue() {
        let controls: [Control] = [
            .engine, .speedUp, .speedDown, .gear, .function(1), .function(5), .steer(-90), .steer(0), .steer(42),
            .setSpeed(0), .setSpeed(240), .deadman(held: true), .deadman(held: false), .inputLost, .inputRestored,
            .linkLost, .linkUp, .suspend, .shutdown,
        ]
        let states = [state(engine: false), state(engine: true), state(engine: true, speed: 30), state(engine: true, speed: 240)]
        for control in controls {
            var cues = 0
            for before in states {
                for link in [true, false] {
                    var planner = FeedbackPlanner(maxSpeed: 30, sessionLimit: .seconds(60))
                    _ = planner.handle(.link(up: link), at: t0)
                    _ = planner.handle(.state(before), at: t0)
                    let said = planner.handle(.applied(control), at: t0)
                    cues += said.count
                    if !FeedbackPlanner.answers(control) {
                        XCTAssertEqual(said, [], "\(control) after \(before), link \(link): not skippable")
                    }
                }
            }
            if FeedbackPlanner.answers(control) {
                XCTAssertGreaterThan(cues, 0, "\(control) is answered in some state (else it need not be told)")
            }
        }
    }

    func testALowBatteryCallsForItsOwnCueOnlyWhenItFalls() {
        var planner = FeedbackPlanner(maxSpeed: 240, sessionLimit: nil)
        let low = LowBatteryAlarm.Change.low(key: "BAT", value: "6.71", threshold: 6.8)
        XCTAssertEqual(planner.handle(.carBattery(low), at: t0), [.batteryLow], "three short pulses")
        XCTAssertEqual(planner.handle(.carBattery(.recovered(key: "BAT", value: "7.00")), at: t0), [], "recovering is not news")
        XCTAssertNil(planner.nextDeadline)
        XCTAssertEqual(FeedbackEvent.batteryLow.pattern.count, 3)
        XCTAssertEqual(Set(FeedbackEvent.allCases.map(\.pattern)).count, FeedbackEvent.allCases.count, "every cue feels different")
    }
}
