import DriveCore
import DriveMapping
import XCTest

final class ButtonGesturesTests: XCTestCase {
    let south = ButtonInput.key(Codes.btnSouth)
    let east = ButtonInput.key(Codes.btnEast)
    let tr = ButtonInput.key(Codes.btnTR)
    let tl = ButtonInput.key(Codes.btnTL)
    let west = ButtonInput.key(Codes.btnWest)
    let north = ButtonInput.key(Codes.btnNorth)

    private func gestures(_ settings: ButtonGestures.Settings = .init()) -> ButtonGestures {
        ButtonGestures(
            map: ButtonMap(
                shortPress: [south: .gear, tr: .speedUp, tl: .speedDown, west: .deadman, north: .f1],
                longPress: [south: .engine, east: .calibrate]),
            settings: settings)
    }

    func testShortOnlyButtonFiresAtPress() {
        var g = gestures()
        XCTAssertEqual(g.press(north, role: .gamepad, at: ms(0)), [.control(.function(1))])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.release(north, role: .gamepad, at: ms(5_000)), [])
    }

    func testShortPressOfALongPressButtonFiresAtRelease() {
        var g = gestures()
        XCTAssertEqual(g.press(south, role: .gamepad, at: ms(1_000)), [])
        XCTAssertEqual(g.nextDeadline, ms(1_600))
        XCTAssertEqual(g.tick(at: ms(1_599)), [])
        XCTAssertEqual(g.release(south, role: .gamepad, at: ms(1_599)), [.control(.gear)])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.tick(at: ms(2_000)), [], "nothing left to fire")
    }

    func testLongPressFiresOnceAtTheDeadline() {
        var g = gestures()
        _ = g.press(south, role: .gamepad, at: ms(1_000))
        XCTAssertEqual(g.tick(at: ms(1_599)), [])
        XCTAssertEqual(g.tick(at: ms(1_600)), [.control(.engine)])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.tick(at: ms(3_000)), [])
        XCTAssertEqual(g.release(south, role: .gamepad, at: ms(3_000)), [], "no short action after a long one")
    }

    func testLongPressFiresAtReleaseWhenNoTickRan() {
        var g = gestures()
        _ = g.press(south, role: .gamepad, at: ms(0))
        XCTAssertEqual(g.release(south, role: .gamepad, at: ms(600)), [.control(.engine)])
    }

    func testLongOnlyButtonShortPressDoesNothing() {
        var g = gestures()
        _ = g.press(east, role: .gamepad, at: ms(0))
        XCTAssertEqual(g.release(east, role: .gamepad, at: ms(100)), [])
        _ = g.press(east, role: .gamepad, at: ms(200))
        XCTAssertEqual(g.tick(at: ms(800)), [.calibrate])
    }

    func testCustomLongPressDuration() {
        var g = gestures(.init(longPressDuration: .milliseconds(1_500)))
        _ = g.press(south, role: .gamepad, at: ms(0))
        XCTAssertEqual(g.nextDeadline, ms(1_500))
        XCTAssertEqual(g.release(south, role: .gamepad, at: ms(1_000)), [.control(.gear)])
    }

    func testRepeatIsOffByDefault() {
        var g = gestures()
        XCTAssertEqual(g.press(tr, role: .gamepad, at: ms(0)), [.control(.speedUp)])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.tick(at: ms(10_000)), [])
    }

    func testRepeatCadence() {
        var g = gestures(.init(repeatEnabled: true, repeatDelay: .milliseconds(400), repeatInterval: .milliseconds(100)))
        XCTAssertEqual(g.press(tr, role: .gamepad, at: ms(0)), [.control(.speedUp)])
        var firedAt: [Instant] = []
        while let deadline = g.nextDeadline, deadline <= ms(1_000) {
            XCTAssertEqual(g.tick(at: deadline), [.control(.speedUp)])
            firedAt.append(deadline)
        }
        XCTAssertEqual(firedAt, [400, 500, 600, 700, 800, 900, 1_000].map { ms($0) })
        XCTAssertEqual(g.release(tr, role: .gamepad, at: ms(1_050)), [])
        XCTAssertNil(g.nextDeadline)
        XCTAssertEqual(g.tick(at: ms(1_100)), [])
    }

    func testLateTickRepeatsOnceAndStaysOnTheGrid() {
        var g = gestures(.init(repeatEnabled: true, repeatDelay: .milliseconds(400), repeatInterval: .milliseconds(100)))
        _ = g.press(tl, role: .gamepad, at: ms(0))
        XCTAssertEqual(g.tick(at: ms(730)), [.control(.speedDown)], "one repeat, not a burst of four")
        XCTAssertEqual(g.nextDeadline, ms(800))
    }

    func testRepeatDoesNotApplyToOtherActions() {
        var g = gestures(.init(repeatEnabled: true))
        _ = g.press(north, role: .gamepad, at: ms(0))
        XCTAssertNil(g.nextDeadline)
    }

    func testDeadmanPressAndRelease() {
        var g = gestures()
        XCTAssertEqual(g.press(west, role: .gamepad, at: ms(0)), [.control(.deadman(held: true))])
        XCTAssertEqual(g.press(west, role: .gamepad, at: ms(10)), [], "a second press while held is ignored")
        XCTAssertEqual(g.release(west, role: .gamepad, at: ms(2_000)), [.control(.deadman(held: false))])
        XCTAssertEqual(g.release(west, role: .gamepad, at: ms(2_001)), [], "a release while not held is ignored")
    }

    func testUnboundButtonsAreIgnored() {
        var g = gestures()
        XCTAssertEqual(g.press(.key(999), role: .gamepad, at: ms(0)), [])
        XCTAssertFalse(g.isHeld(.key(999), role: .gamepad))
    }

    func testReleaseAllDropsPendingActionsButReleasesTheDeadman() {
        var g = gestures()
        _ = g.press(west, role: .gamepad, at: ms(0))
        _ = g.press(south, role: .gamepad, at: ms(0))
        _ = g.press(south, role: .keyboard, at: ms(0))
        XCTAssertEqual(g.releaseAll(role: .gamepad), [.control(.deadman(held: false))])
        XCTAssertFalse(g.isHeld(south, role: .gamepad))
        XCTAssertTrue(g.isHeld(south, role: .keyboard), "other devices keep their buttons")
        XCTAssertEqual(g.tick(at: ms(600)), [.control(.engine)])
    }

    func testSimultaneousDeadlinesFireInPressOrder() {
        var g = ButtonGestures(map: ButtonMap(longPress: [south: .engine, east: .gear, north: .f1]))
        _ = g.press(north, role: .gamepad, at: ms(0))
        _ = g.press(south, role: .gamepad, at: ms(0))
        _ = g.press(east, role: .gamepad, at: ms(0))
        XCTAssertEqual(g.tick(at: ms(600)), [.control(.function(1)), .control(.engine), .control(.gear)])
    }
}
