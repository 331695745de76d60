import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

final class SampleWatchdogTests: XCTestCase {
    private func ms(_ value: Int64) -> Instant { .milliseconds(value) }

    func testSilenceIsReportedOnceUntilTheNextSample() {
        var watchdog = SampleWatchdog(timeout: .milliseconds(500))
        watchdog.opened(at: ms(0))
        watchdog.sample(at: ms(100))
        XCTAssertEqual(watchdog.deadline, ms(600))
        XCTAssertFalse(watchdog.expire(at: ms(599)))
        XCTAssertTrue(watchdog.expire(at: ms(600)))
        XCTAssertTrue(watchdog.isSilent)
        XCTAssertNil(watchdog.deadline)
        XCTAssertFalse(watchdog.expire(at: ms(2_000)), "one report per silence")
        XCTAssertTrue(watchdog.sample(at: ms(2_100)), "the sample ends the silence")
        XCTAssertFalse(watchdog.isSilent)
        XCTAssertTrue(watchdog.expire(at: ms(2_600)), "a second silence is reported again")
    }

    func testAReplacementSensorThatNeverDeliversIsReportedLost() {
        var watchdog = SampleWatchdog(timeout: .milliseconds(500))
        watchdog.opened(at: ms(0))
        XCTAssertTrue(watchdog.expire(at: ms(500)), "the first sensor went silent")
        watchdog.closed()                       // unplugged while silent
        watchdog.opened(at: ms(3_000))          // a replacement, which never delivers
        XCTAssertFalse(watchdog.isSilent)
        XCTAssertEqual(watchdog.deadline, ms(3_500))
        XCTAssertTrue(watchdog.expire(at: ms(3_500)), "the replacement must be reported lost too")
    }

    func testClosedSensorIsNotWatched() {
        var watchdog = SampleWatchdog(timeout: .milliseconds(500))
        watchdog.opened(at: ms(0))
        watchdog.closed()
        XCTAssertNil(watchdog.deadline)
        XCTAssertFalse(watchdog.expire(at: ms(1_000)))
    }

    func testZeroAndNonFiniteGravityAreNotUsableSamples() {
        let mapper = ControlMapper(settings: .init(stick: nil, tilt: TiltMapper.Settings()))
        func frame(_ x: Double, _ y: Double, _ z: Double) -> InputFrame {
            InputFrame(time: .zero, acceleration: Vector3(x: x, y: y, z: z))
        }
        XCTAssertTrue(mapper.isUsableTiltSample(frame(0, 0, 9.81)))
        XCTAssertTrue(mapper.isUsableTiltSample(frame(3, 0, 9.3)))
        XCTAssertFalse(mapper.isUsableTiltSample(frame(0, 0, 0)), "a zero vector has no direction")
        XCTAssertFalse(mapper.isUsableTiltSample(frame(0, 9.81, 0)), "nothing on the tilt axes (x, z)")
        XCTAssertFalse(mapper.isUsableTiltSample(frame(.nan, 0, 9.81)))
        XCTAssertFalse(mapper.isUsableTiltSample(frame(0, 0, .infinity)))
        XCTAssertFalse(mapper.isUsableTiltSample(InputFrame(time: .zero)), "no acceleration at all")
    }
}
