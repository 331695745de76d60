import DriveCore
import DriveInputModel
import DriveMapping
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gravity (9.81 m/s²) for a device rolled `degrees` right, in the device's x–z plane.
func gravity(rolledDegrees degrees: Double) -> Vector3 {
    let radians = degrees * Double.pi / 180
    return Vector3(x: 9.81 * sin(radians), y: 0, z: 9.81 * cos(radians))
}

final class TiltMapperTests: XCTestCase {
    func testIdentityMountFlatIsZeroAndRollIsTheAngle() {
        var mapper = TiltMapper()
        assertClose(mapper.update(gravity: Vector3(x: 0, y: 0, z: 9.81), at: .zero), 0)
        assertClose(mapper.update(gravity: gravity(rolledDegrees: 30), at: ms(10)), 30)
        assertClose(mapper.update(gravity: gravity(rolledDegrees: -45), at: ms(20)), -45)
        assertClose(mapper.update(gravity: gravity(rolledDegrees: 120), at: ms(30)), 90, "clamped")
    }

    func testRotatedMountMatrix() throws {
        // Sensor mounted turned 90° about z: device x = sensor y.
        let mount = try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 1")
        var mapper = TiltMapper(settings: .init(mountMatrix: mount))
        let g = gravity(rolledDegrees: 30)
        let sensor = Vector3(x: 0, y: g.x, z: g.z)  // what the rotated sensor reports
        assertClose(mapper.update(gravity: sensor, at: .zero), 30)
    }

    func testFlippedMountMatrix() throws {
        // Sensor mounted upside down (turned 180° about y): x and z flip.
        let mount = try MountMatrix.parse("-1, 0, 0; 0, 1, 0; 0, 0, -1")
        var mapper = TiltMapper(settings: .init(mountMatrix: mount))
        let g = gravity(rolledDegrees: -20)
        assertClose(mapper.update(gravity: Vector3(x: -g.x, y: 0, z: -g.z), at: .zero), -20)
        // Without the matrix the same reading is nonsense (±160° → clamped).
        var plain = TiltMapper()
        assertClose(plain.update(gravity: Vector3(x: -g.x, y: 0, z: -g.z), at: .zero), 90)
    }

    func testOtherAxisPair() {
        var mapper = TiltMapper(settings: .init(lateralAxis: .y, verticalAxis: .x))
        // Device held in landscape: gravity along x at rest, rolling moves it into y.
        assertClose(mapper.update(gravity: Vector3(x: 9.81 * cos(Double.pi / 6), y: 9.81 * sin(Double.pi / 6), z: 0), at: .zero), 30)
    }

    func testCalibrationMakesTheCurrentPoseStraight() {
        var mapper = TiltMapper()
        let resting = gravity(rolledDegrees: 12)
        assertClose(mapper.calibrateNeutral(from: resting), 12)
        assertClose(mapper.calibrate(from: resting), 12)
        assertClose(mapper.settings.neutralDegrees, 12)
        assertClose(mapper.update(gravity: resting, at: .zero), 0)
        assertClose(mapper.update(gravity: gravity(rolledDegrees: 42), at: ms(10)), 30)
    }

    func testCalibrationAcrossTheWrap() {
        // A sensor that reads z = −g flat: raw roll 180°. After calibration, small rolls are small.
        var mapper = TiltMapper()
        XCTAssertNotNil(mapper.calibrate(from: Vector3(x: 0, y: 0, z: -9.81)))
        let g = gravity(rolledDegrees: 30)
        assertClose(mapper.update(gravity: Vector3(x: -g.x, y: 0, z: -g.z), at: .zero), 30, accuracy: 1e-9)
        let h = gravity(rolledDegrees: -30)
        assertClose(mapper.update(gravity: Vector3(x: -h.x, y: 0, z: -h.z), at: ms(1)), -30, accuracy: 1e-9)
    }

    func testSensitivityAndInvert() {
        var mapper = TiltMapper(settings: .init(sensitivity: 2, invert: true))
        assertClose(mapper.update(gravity: gravity(rolledDegrees: 20), at: .zero), -40)
        assertClose(mapper.update(gravity: gravity(rolledDegrees: -60), at: ms(1)), 90, "120 clamps to 90")
    }

    func testZeroOrNonFiniteVectorIsIgnored() {
        var mapper = TiltMapper()
        XCTAssertNil(mapper.update(gravity: Vector3(x: 0, y: 0, z: 0), at: .zero))
        XCTAssertNil(mapper.calibrateNeutral(from: Vector3(x: .nan, y: 0, z: 1)))
        assertClose(mapper.update(gravity: gravity(rolledDegrees: 10), at: ms(1)), 10)
        assertClose(mapper.update(gravity: Vector3(x: .infinity, y: 0, z: 1), at: ms(2)), 10, "keeps the last θ")
    }

    func testAxisPairParsing() {
        XCTAssertEqual(TiltMapper.Axis.parsePair("x,z").map { [$0.lateral, $0.vertical] }, [.x, .z])
        XCTAssertEqual(TiltMapper.Axis.parsePair(" Y , X ").map { [$0.lateral, $0.vertical] }, [.y, .x])
        XCTAssertNil(TiltMapper.Axis.parsePair("x,x"))
        XCTAssertNil(TiltMapper.Axis.parsePair("x"))
        XCTAssertNil(TiltMapper.Axis.parsePair("x,w"))
        XCTAssertNil(TiltMapper.Axis.parsePair("x,y,z"))
    }

    func testFilteredTiltSmoothsASuddenTurn() {
        var mapper = TiltMapper(settings: .init(filterTimeConstant: .milliseconds(100)))
        assertClose(mapper.update(gravity: gravity(rolledDegrees: 0), at: .zero), 0)
        let first = mapper.update(gravity: gravity(rolledDegrees: 40), at: ms(10)) ?? .nan
        XCTAssertEqual(first, 40 * 10.0 / 110.0, accuracy: 1e-9)
    }
}

final class MountMatrixTests: XCTestCase {
    func testParsesTheSysfsAndUdevForms() throws {
        let expected = MountMatrix(Vector3(x: 0, y: 1, z: 0), Vector3(x: -1, y: 0, z: 0), Vector3(x: 0, y: 0, z: 1))
        XCTAssertEqual(try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 1"), expected)
        XCTAssertEqual(try MountMatrix.parse("0,1,0;-1,0,0;0,0,1"), expected)
        XCTAssertEqual(try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 1\n"), expected, "sysfs ends with a newline")
        XCTAssertEqual(try MountMatrix.parse("\"0, 1, 0; -1, 0, 0; 0, 0, 1\"\r\n"), expected)
        XCTAssertEqual(try MountMatrix.parse(" 0 ,+1.0, 0 ;  -1 , 0.0 , 0 ; 0, 0, 1e0 "), expected)
        XCTAssertEqual(try MountMatrix.parse("0.5, 0, 0; 0, 1, 0; 0, 0, 1").rows[0].x, 0.5)
        XCTAssertEqual(try MountMatrix.parse(""), .identity, "empty means identity, as in iio-sensor-proxy")
        XCTAssertEqual(try MountMatrix.parse(MountMatrix.identity.description), .identity)
        XCTAssertEqual(MountMatrix.identity.description, "1, 0, 0; 0, 1, 0; 0, 0, 1")
    }

    func testRejectsMalformedText() {
        let bad: [(String, String)] = [
            ("1, 0, 0; 0, 1, 0", "2 row(s)"),
            ("1, 0, 0; 0, 1, 0; 0, 0, 1; 1, 0, 0", "4 row(s)"),
            ("1, 0; 0, 1, 0; 0, 0, 1", "row 1 has 2"),
            ("1, 0, 0; 0, 1, 0, 0; 0, 0, 1", "row 2 has 4"),
            ("1, 0, 0; 0, one, 0; 0, 0, 1", "\"one\" is not a number"),
            ("1, 0, 0; 0, 1, 0; 0, , 1", "\"\" is not a number"),
            ("nan, 0, 0; 0, 1, 0; 0, 0, 1", "not a number"),
            ("inf, 0, 0; 0, 1, 0; 0, 0, 1", "not a number"),
            ("0x1p0, 0, 0; 0, 1, 0; 0, 0, 1", "not a number"),
            ("1, 0, 0; 0, 0, 0; 0, 0, 1", "axis y) is all zeroes"),
            ("garbage", "1 row(s)"),
        ]
        for (text, fragment) in bad {
            do {
                _ = try MountMatrix.parse(text)
                XCTFail("accepted \(text)")
            } catch {
                XCTAssertTrue(error.description.contains(fragment), "\(text): \(error.description)")
                XCTAssertTrue(error.description.contains("expected three rows"), error.description)
            }
        }
    }

    func testApplyMultipliesRows() throws {
        let m = try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 2")
        XCTAssertEqual(m.apply(Vector3(x: 1, y: 2, z: 3)), Vector3(x: 2, y: -1, z: 6))
    }
}

final class LowPassFilterTests: XCTestCase {
    /// The output after a unit step held for `duration`, sampling every `step`.
    private func stepResponse(tau: Duration, step: Int64, durationMilliseconds: Int64) -> Double {
        var filter = LowPassFilter(timeConstant: tau)
        filter.update(0, at: .zero)
        var t: Int64 = 0
        var output = 0.0
        while t < durationMilliseconds {
            t += step
            output = filter.update(1, at: ms(t)) ?? .nan
        }
        return output
    }

    func testStepResponseIsAboutTheSameAtAnySampleRate() {
        let expected = 1 - exp(-3.0)  // after 3 time constants
        let rates: [Int64] = [1, 5, 10, 20]
        let responses = rates.map { stepResponse(tau: .milliseconds(100), step: $0, durationMilliseconds: 300) }
        for (rate, response) in zip(rates, responses) {
            XCTAssertEqual(response, expected, accuracy: 0.02, "sampling every \(rate) ms")
        }
        XCTAssertLessThan((responses.max() ?? 0) - (responses.min() ?? 1), 0.02)
        // A per-sample filter (fixed alpha) would differ wildly: show the time-based one does not.
        XCTAssertEqual(stepResponse(tau: .milliseconds(100), step: 1, durationMilliseconds: 100), 1 - exp(-1.0), accuracy: 0.01)
        XCTAssertEqual(stepResponse(tau: .milliseconds(100), step: 25, durationMilliseconds: 100), 1 - exp(-1.0), accuracy: 0.05)
    }

    func testConverges() {
        XCTAssertEqual(stepResponse(tau: .milliseconds(100), step: 10, durationMilliseconds: 5_000), 1, accuracy: 1e-6)
    }

    func testZeroTimeConstantPassesThrough() {
        var filter = LowPassFilter(timeConstant: .zero)
        XCTAssertEqual(filter.update(5, at: .zero), 5)
        XCTAssertEqual(filter.update(-7, at: ms(1)), -7)
    }

    func testFirstSamplePassesThroughAndAlphaIsDtOverTauPlusDt() {
        var filter = LowPassFilter(timeConstant: .milliseconds(30))
        XCTAssertEqual(filter.update(10, at: ms(100)), 10)
        XCTAssertEqual(filter.update(20, at: ms(110)) ?? .nan, 10 + 10 * 10.0 / 40.0, accuracy: 1e-12)
    }

    func testSameInstantAndNonFiniteSamplesDoNotMoveIt() {
        var filter = LowPassFilter(timeConstant: .milliseconds(50))
        filter.update(1, at: ms(10))
        XCTAssertEqual(filter.update(100, at: ms(10)), 1)
        XCTAssertEqual(filter.update(100, at: ms(5)), 1, "a sample from the past")
        XCTAssertEqual(filter.update(.nan, at: ms(20)), 1)
        filter.reset()
        XCTAssertEqual(filter.update(3, at: ms(30)), 3)
    }
}
