import DriveCore
import DriveMapping
import DriveWebProtocol
import XCTest

@testable import DriveDashboard

/// A phone's tilt and thumb stick (issue 32): the orientation math, the stick's forms and speed steps.
final class PhoneDrivingTests: XCTestCase {
    let t0 = Instant(nanoseconds: 1_000_000_000_000)
    func at(_ ms: Int64) -> Instant { t0.advanced(by: .milliseconds(ms)) }
    let unsmoothed = PhoneTilt.Settings(smoothing: .zero)

    func theta(_ beta: Double, _ gamma: Double, angle: Int = 0, hold: PhoneTilt.Hold, settings: PhoneTilt.Settings? = nil) -> Double? {
        var tilt = PhoneTilt(settings: settings ?? unsmoothed)
        return tilt.update(PhoneTiltReading(beta: beta, gamma: gamma, screenAngle: angle, hold: hold), at: at(0))
    }

    func testUpVectorFollowsTheW3CAngles() {
        let flat = PhoneTilt.up(beta: 0, gamma: 0)
        XCTAssertEqual(flat.z, 1, accuracy: 1e-12)
        let portrait = PhoneTilt.up(beta: 90, gamma: 0)
        XCTAssertEqual(portrait.y, 1, accuracy: 1e-12, "upright in portrait: the top points up")
        let rolledRight = PhoneTilt.up(beta: 0, gamma: 30)
        XCTAssertLessThan(rolledRight.x, 0, "right edge down: up leans towards the device's left")
    }

    func testFlatRollingRightSteersRightAtEveryScreenAngle() throws {
        // Tipping the screen's right edge (as the driver sees it) down by 30° in each rotation of the screen.
        XCTAssertEqual(try XCTUnwrap(theta(0, 30, angle: 0, hold: .flat)), 30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(0, -30, angle: 0, hold: .flat)), -30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(30, 0, angle: 90, hold: .flat)), 30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(0, -30, angle: 180, hold: .flat)), 30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(-30, 0, angle: 270, hold: .flat)), 30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(-30, 0, angle: -90, hold: .flat)), 30, accuracy: 1e-9, "−90 is 270")
    }

    func testWheelTurnedClockwiseSteersRightAtEveryScreenAngle() throws {
        // Upright, screen towards the driver, turned 20° clockwise like a steering wheel.
        XCTAssertEqual(try XCTUnwrap(theta(70, 90, angle: 0, hold: .wheel)), 20, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(20, -90, angle: 90, hold: .wheel)), 20, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(-70, -90, angle: 180, hold: .wheel)), 20, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(-20, 90, angle: 270, hold: .wheel)), 20, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(-20, -90, angle: 90, hold: .wheel)), -20, accuracy: 1e-9, "anticlockwise: left")
        XCTAssertEqual(try XCTUnwrap(theta(0, -90, angle: 90, hold: .wheel)), 0, accuracy: 1e-9, "level landscape: straight")
    }

    func testSensitivityClampAndInvert() throws {
        let doubled = PhoneTilt.Settings(sensitivity: 2, smoothing: .zero)
        XCTAssertEqual(try XCTUnwrap(theta(0, 20, hold: .flat, settings: doubled)), 40, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(theta(0, 60, hold: .flat, settings: doubled)), 90, accuracy: 1e-9, "clamped at ±90")
        XCTAssertEqual(try XCTUnwrap(theta(0, -60, hold: .flat, settings: doubled)), -90, accuracy: 1e-9)
        let inverted = PhoneTilt.Settings(invert: true, smoothing: .zero)
        XCTAssertEqual(try XCTUnwrap(theta(0, 30, hold: .flat, settings: inverted)), -30, accuracy: 1e-9)
    }

    func testSetStraightIsThisPhonesOwnNeutralPerHold() throws {
        var tilt = PhoneTilt(settings: unsmoothed)
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 0, gamma: 10, hold: .flat), at: at(0))), 10, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(tilt.straighten()), 10, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 0, gamma: 10, hold: .flat), at: at(10))), 0, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 0, gamma: 25, hold: .flat), at: at(20))), 15, accuracy: 1e-9)
        // The wheel hold keeps its own neutral (0), and the flat one is still there on the way back.
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 20, gamma: -90, screenAngle: 90, hold: .wheel), at: at(30))), 20, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 0, gamma: 25, hold: .flat), at: at(40))), 15, accuracy: 1e-9)
        XCTAssertNil(PhoneTilt().neutrals[.wheel])
        var fresh = PhoneTilt()
        XCTAssertNil(fresh.straighten(), "nothing to straighten before a reading")
    }

    func testSmoothingIsTheSteeringLowPass() throws {
        var tilt = PhoneTilt(settings: PhoneTilt.Settings(smoothing: .milliseconds(100)))
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 0, gamma: 30, hold: .flat), at: at(0))), 30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(tilt.update(PhoneTiltReading(beta: 0, gamma: 0, hold: .flat), at: at(100))), 15, accuracy: 1e-9)
    }

    // MARK: The stick

    func testPolarForm() {
        func polar(_ x: Double, _ y: Double) -> (Double, Double) {
            let r = PhoneStickReading(x: x, y: y, form: .polar)
            return (PhoneStick.steering(r), PhoneStick.travel(r))
        }
        XCTAssertEqual(polar(0, 1).0, 0)
        XCTAssertEqual(polar(0, 1).1, 1)
        XCTAssertEqual(polar(1, 0).0, 90, accuracy: 1e-9)
        XCTAssertEqual(polar(0.5, 0.5).0, 45, accuracy: 1e-9)
        XCTAssertEqual(polar(-0.3, 0.3).0, -45, accuracy: 1e-9)
        XCTAssertEqual(polar(0.1, -1).0, 90, accuracy: 1e-9, "behind the centre: clamped at full lock")
        XCTAssertEqual(polar(0.02, 0.02).0, 0, "at rest the direction is noise")
        XCTAssertEqual(polar(1, 1).1, 1, "displacement at most 1")
    }

    func testXYForm() {
        let r = PhoneStickReading(x: 0.5, y: 0.8, form: .xy)
        XCTAssertEqual(PhoneStick.steering(r), 45, accuracy: 1e-9)
        XCTAssertEqual(PhoneStick.travel(r), 0.8, accuracy: 1e-9)
        XCTAssertEqual(PhoneStick.travel(PhoneStickReading(x: 0, y: -0.7, form: .xy)), 0, "back is 0")
        XCTAssertEqual(PhoneStick.steering(PhoneStickReading(x: -1, y: 0, form: .xy)), -90)
    }

    func testStickSpeedStepsWithHysteresisAtABoundary() {
        var stick = PhoneStick(maxSpeed: 240, hysteresis: 0.25)
        func y(_ value: Double) -> [Control] { stick.update(PhoneStickReading(x: 0, y: value, form: .xy)) }
        XCTAssertEqual(y(0), [.steer(0)])
        XCTAssertEqual(y(0.5), [.steer(0), .setSpeed(120)])
        XCTAssertEqual(y(0.54), [.steer(0)], "12.96 steps: still 120")
        XCTAssertEqual(y(0.545), [.steer(0)], "13.08: within the margin past 130")
        XCTAssertEqual(y(0.56), [.steer(0), .setSpeed(130)], "13.44: past the margin")
        XCTAssertEqual(y(0.535), [.steer(0)], "12.84: within the margin below 130")
        XCTAssertEqual(y(0.52), [.steer(0), .setSpeed(120)])
        XCTAssertEqual(y(0), [.steer(0), .setSpeed(0)])
    }

    func testStickSpeedIsCappedByMaxSpeed() {
        var stick = PhoneStick(maxSpeed: 100)
        _ = stick.update(PhoneStickReading(x: 0, y: 0, form: .polar))
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 1, form: .polar)), [.steer(0), .setSpeed(100)])
    }

    func testANewStickAndAStoppedStickMustComeBackToRest() {
        var stick = PhoneStick()
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 1, form: .xy)), [.steer(0)], "held at first: no speed")
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 0.01, form: .xy)), [.steer(0)])
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 1, form: .xy)), [.steer(0), .setSpeed(240)])
        stick.stopped()
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 1, form: .xy)), [.steer(0)], "after a stop: rest first")
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 0, form: .xy)), [.steer(0)])
        XCTAssertEqual(stick.update(PhoneStickReading(x: 0, y: 0.25, form: .xy)), [.steer(0), .setSpeed(60)])
    }

    func testUserAgentLabels() {
        let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126 Mobile Safari/537.36"
        XCTAssertEqual(ClientLabel.device(userAgent: android).label(client: 2), "phone 2 (Android)")
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
        XCTAssertEqual(ClientLabel.device(userAgent: iphone).label(client: 3), "phone 3 (iPhone)")
        XCTAssertEqual(ClientLabel.device(userAgent: "Mozilla/5.0 (X11; Linux x86_64)").label(client: 1), "browser 1 (Linux)")
        XCTAssertEqual(ClientLabel.device(userAgent: nil).label(client: 4), "browser 4 (browser)")
    }
}
