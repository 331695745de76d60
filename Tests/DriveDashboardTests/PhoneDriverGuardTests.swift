import DriveCore
import DriveWebProtocol
import XCTest

@testable import DriveDashboard

/// `SteeringGuard` with phones (issue 32): the 500 ms silence rule, release, one driver at a time, the
/// speed's rest rule; exact instants.
final class PhoneDriverGuardTests: XCTestCase {
    let t0 = Instant(nanoseconds: 1_000_000_000_000)
    func at(_ ms: Int64) -> Instant { t0.advanced(by: .milliseconds(ms)) }
    /// A level phone's report; `seq`: its page's count of sensor events (moves when the sensor fired).
    func level(_ seq: Int) -> ClientMessage { .tilt(PhoneTiltReading(beta: 0, gamma: 0, hold: .flat, sequence: seq)) }
    var level: ClientMessage { level(nextSequence()) }
    private var sequence = 0
    private func nextSequence() -> Int {
        sequence += 1
        return sequence
    }
    func stick(_ x: Double, _ y: Double) -> ClientMessage { .stick(PhoneStickReading(x: x, y: y, form: .xy)) }
    func makeGuard() -> SteeringGuard { SteeringGuard(phone: .init(tilt: .init(smoothing: .zero))) }

    func testASilentPhoneIsLostInputOnceAtExactly500ms() {
        var g = makeGuard()
        XCTAssertEqual(g.receive(level, from: 1, label: "phone 1 (Android)", at: at(0)).controls, [.steer(0)])
        XCTAssertEqual(g.nextDeadline, at(500))
        XCTAssertEqual(g.receive(level, from: 1, label: "phone 1 (Android)", at: at(450)).controls, [.steer(0)])
        XCTAssertEqual(g.nextDeadline, at(950), "each report whose sensor fired is input")
        XCTAssertEqual(g.received(.ping, from: 1, at: at(900)), [])
        XCTAssertEqual(g.nextDeadline, at(950), "pings do not keep a phone alive: a throttled tab still pings")
        XCTAssertEqual(g.tick(at: at(949)), [])
        XCTAssertEqual(g.tick(at: at(950)), [.inputLost])
        XCTAssertNil(g.nextDeadline)
        XCTAssertFalse(g.hasSteeringClient)
        XCTAssertEqual(g.tick(at: at(2000)), [], "reported once")
        XCTAssertEqual(g.receive(level, from: 1, label: "phone 1 (Android)", at: at(3000)).controls, [.inputRestored, .steer(0)])
    }

    func testTheSliderKeepsItsSecond() {
        var g = makeGuard()
        _ = g.received(.control(.steer(10)), from: 1, at: at(0))
        XCTAssertEqual(g.nextDeadline, at(1000))
        _ = g.receive(stick(0, 0), from: 1, label: "tab 1", at: at(100))
        XCTAssertEqual(g.nextDeadline, at(600), "the same tab's stick: the phone's 500 ms")
    }

    func testReleaseFromTheDriverIsLostInputFromOthersNothing() {
        var g = makeGuard()
        _ = g.receive(level, from: 1, label: "phone 1 (Android)", at: at(0))
        XCTAssertEqual(g.received(.release, from: 2, at: at(10)), [])
        XCTAssertTrue(g.isSteering(1))
        XCTAssertEqual(g.received(.release, from: 1, at: at(20)), [.inputLost])
        XCTAssertNil(g.driver)
        XCTAssertEqual(g.received(.release, from: 1, at: at(30)), [], "once")
    }

    func testDisconnectOfTheDriverIsLostInput() {
        var g = makeGuard()
        _ = g.receive(stick(0, 0), from: 4, label: "phone 4 (iPhone)", at: at(0))
        XCTAssertEqual(g.disconnected(5, at: at(5)), [])
        XCTAssertEqual(g.disconnected(4, at: at(10)), [.inputLost])
    }

    func testASecondPhoneIsRefusedWhileTheFirstDrivesAndTakesOverAfterALoss() {
        var g = makeGuard()
        _ = g.receive(level, from: 1, label: "phone 1 (Android)", at: at(0))
        let refused = "phone 1 (Android) is driving: wait for your turn"
        for message in [stick(0, 1), level, .control(.steer(5)), .control(.engine), .control(.speedUp), .control(.speedDown),
                        .control(.gear), .control(.function(2)), .straight] {
            XCTAssertEqual(g.receive(message, from: 2, label: "phone 2 (iPhone)", at: at(100)), .init(refusal: refused), "\(message)")
        }
        XCTAssertEqual(g.receive(.ping, from: 2, label: "phone 2 (iPhone)", at: at(100)), .init(), "a ping is no control")
        XCTAssertEqual(g.receive(.control(.engine), from: 1, label: "phone 1 (Android)", at: at(100)).controls, [.engine])
        XCTAssertEqual(g.tick(at: at(500)), [.inputLost])
        let outcome = g.receive(stick(0, 0), from: 2, label: "phone 2 (iPhone)", at: at(600))
        XCTAssertEqual(outcome.controls, [.inputRestored, .steer(0)])
        XCTAssertEqual(g.driver?.label, "phone 2 (iPhone)")
        XCTAssertEqual(g.receive(level, from: 1, label: "phone 1 (Android)", at: at(610)).refusal,
                       "phone 2 (iPhone) is driving: wait for your turn")
    }

    func testButtonsWithNoDriverAreAnyonesAndMakeNoDriver() {
        var g = makeGuard()
        XCTAssertEqual(g.receive(.control(.engine), from: 3, label: "browser 3 (Linux)", at: at(0)).controls, [.engine])
        XCTAssertNil(g.driver)
        XCTAssertNil(g.nextDeadline)
    }

    func testSpeedComesBackOnlyFromRestAfterAStop() {
        var g = makeGuard()
        func send(_ x: Double, _ y: Double, _ ms: Int64) -> [Control] {
            g.receive(stick(x, y), from: 1, label: "phone 1 (Android)", at: at(ms)).controls
        }
        XCTAssertEqual(send(0, 0, 0), [.steer(0)])
        XCTAssertEqual(send(0, 1, 50), [.steer(0), .setSpeed(240)])
        g.observe(speed: 240)
        XCTAssertEqual(send(0, 1, 100), [.steer(0)])
        // The engine went off (or a pad was lost, or the link): the car stands while the stick is held.
        g.observe(speed: 0)
        XCTAssertEqual(send(0, 1, 150), [.steer(0)], "no speed while still held")
        XCTAssertEqual(send(0, 0, 200), [.steer(0)])
        XCTAssertEqual(send(0, 0.5, 250), [.steer(0), .setSpeed(120)])
        // Lost input (silence) with the stick held: after the restore it must rest first too.
        XCTAssertEqual(g.tick(at: at(750)), [.inputLost])
        XCTAssertEqual(send(0, 0.5, 800), [.inputRestored, .steer(0)])
        XCTAssertEqual(send(0, 0, 850), [.steer(0)])
        XCTAssertEqual(send(0, 0.5, 900), [.steer(0), .setSpeed(120)])
    }

    func testStraightSetsThisPhonesNeutral() {
        var g = makeGuard()
        func rolled(_ seq: Int) -> ClientMessage { .tilt(PhoneTiltReading(beta: 0, gamma: 12, hold: .flat, sequence: seq)) }
        guard case .steer(let before)? = g.receive(rolled(1), from: 1, label: "p", at: at(0)).controls.last else {
            return XCTFail("no steer")
        }
        XCTAssertEqual(before, 12, accuracy: 1e-9)
        XCTAssertEqual(g.receive(.straight, from: 1, label: "p", at: at(10)), .init())
        guard case .steer(let theta)? = g.receive(rolled(2), from: 1, label: "p", at: at(20)).controls.last else {
            return XCTFail("no steer")
        }
        XCTAssertEqual(theta, 0, accuracy: 1e-9)
    }

    // MARK: The sensor proves itself (issue 38)

    func testATiltWhoseSensorStoppedIsLostInputAtTheTimeoutThoughThePageKeepsReporting() {
        var g = makeGuard()
        XCTAssertEqual(g.receive(level(7), from: 1, label: "phone 1 (Android)", at: at(0)).controls, [.steer(0)])
        for ms in stride(from: Int64(50), to: 500, by: 50) {
            XCTAssertEqual(g.receive(level(7), from: 1, label: "phone 1 (Android)", at: at(ms)).controls, [],
                           "the heartbeat of a sensor that did not fire is no input")
            XCTAssertEqual(g.nextDeadline, at(500), "and does not move the deadline")
        }
        XCTAssertEqual(g.tick(at: at(499)), [])
        XCTAssertEqual(g.tick(at: at(500)), [.inputLost])
        XCTAssertEqual(g.lastSilence, .init(client: 1, silence: .sensor), "the page kept reporting: the sensor is what went silent")
        XCTAssertEqual(g.receive(level(7), from: 1, label: "phone 1 (Android)", at: at(550)).controls, [], "stale reports do not restore")
        XCTAssertNil(g.driver)
        XCTAssertEqual(g.receive(level(8), from: 1, label: "phone 1 (Android)", at: at(600)).controls, [.inputRestored, .steer(0)],
                       "the sensor fired again: input again")
    }

    func testASilentPageIsToldFromASilentSensor() {
        var g = makeGuard()
        _ = g.receive(level(1), from: 2, label: "phone 2 (iPhone)", at: at(0))
        XCTAssertEqual(g.tick(at: at(500)), [.inputLost])
        XCTAssertEqual(g.lastSilence, .init(client: 2, silence: .page))
    }

    func testThePhonesSilenceIsTheConfiguredInputTimeout() {
        var g = SteeringGuard(phone: .init(tilt: .init(smoothing: .zero), inputTimeout: .milliseconds(300)))
        XCTAssertEqual(g.phoneTimeout, .milliseconds(300))
        _ = g.receive(level(1), from: 1, label: "p", at: at(0))
        XCTAssertEqual(g.nextDeadline, at(300))
        _ = g.receive(stick(0, 0), from: 1, label: "p", at: at(100))
        XCTAssertEqual(g.nextDeadline, at(400), "a stick report always counts: a thumb held still fires nothing")
    }

    func testAnotherPhonesStaleReportNeitherDrivesNorIsRefusedSilently() {
        var g = makeGuard()
        _ = g.receive(level(1), from: 1, label: "phone 1 (Android)", at: at(0))
        XCTAssertEqual(g.receive(level(1), from: 2, label: "phone 2 (iPhone)", at: at(10)).refusal,
                       "phone 1 (Android) is driving: wait for your turn")
        XCTAssertEqual(g.tick(at: at(500)), [.inputLost])
        XCTAssertEqual(g.receive(level(1), from: 2, label: "phone 2 (iPhone)", at: at(510)).controls, [],
                       "its sensor has not fired since its refused report")
        XCTAssertEqual(g.receive(level(2), from: 2, label: "phone 2 (iPhone)", at: at(520)).controls, [.inputRestored, .steer(0)])
    }
}
