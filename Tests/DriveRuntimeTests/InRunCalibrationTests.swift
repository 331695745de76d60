import DriveConfig
import DriveCore
import DriveInput
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Foundation
import Glibc
import Logging
import XCTest

/// The calibrate button during `carbridge run` (issue 16): with a tilt throttle, the pitch's neutral is
/// written to the config file together with the roll's, as `carbridge calibrate` writes them. A whole
/// `RunSession` on a manual clock replays a tilt rig (roll 10°, pitch 5°) whose button is bound to
/// "calibrate"; the config file is read back after the run.
final class InRunCalibrationTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "carbridge-inrun-calibrate-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A tilt rig as evemu-record shows it: an accelerometer (INPUT_PROP_ACCELEROMETER) with one button
    /// (BTN_SOUTH, 0x130: byte 38 of the key bitmap). It is held at x = 1411, y = 700, z = 8000 (roll
    /// atan2(x, z) = 10.0°, pitch atan2(y, z) = 5.0°) and its button is pressed at 0.2 s.
    private let recording = """
        # EVEMU 1.3
        N: Tilt Rig With A Button
        I: 0003 1234 5679 0001
        P: 40 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 01 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 03 07 00 00 00 00 00 00 00
        A: 00 -32768 32767 16 0 8192
        A: 01 -32768 32767 16 0 8192
        A: 02 -32768 32767 16 0 8192
        E: 0.000000 0003 0000 1411
        E: 0.000000 0003 0001 700
        E: 0.000000 0003 0002 8000
        E: 0.000000 0000 0000 0000
        E: 0.100000 0003 0000 1412
        E: 0.100000 0000 0000 0000
        E: 0.150000 0003 0000 1411
        E: 0.150000 0000 0000 0000
        E: 0.200000 0001 0130 0001
        E: 0.200000 0000 0000 0000
        E: 0.250000 0001 0130 0000
        E: 0.250000 0000 0000 0000
        E: 0.300000 0003 0000 1412
        E: 0.300000 0000 0000 0000

        """

    private let configText = """
        # the tilt rig of InRunCalibrationTests
        [steering]
        source = "tilt"
        tilt_axes = "x,z"
        smoothing_ms = 0
        # written by the calibrate button
        neutral_deg = 0.0

        [throttle]
        source = "tilt"
        pitch_axes = "y,z"
        neutral_deg = 0.0
        deadzone_deg = 6.0

        [buttons]
        BTN_SOUTH = "calibrate"
        """

    func testTheCalibrateButtonSavesThePitchNeutralWithTheRoll() throws {
        let path = directory + "/rig.toml"
        try configText.write(toFile: path, atomically: true, encoding: .utf8)
        let config = try CarbridgeConfig.load(file: path, resolver: EventCodeNames())

        let loop = try makeManualLoop()
        var master: Int32 = -1, slave: Int32 = -1
        XCTAssertEqual(openpty(&master, &slave, nil, nil, nil), 0)
        defer { close(master); close(slave) }
        let link = SessionTestLink(loop: loop)
        var options = RunSession.Options()
        options.keyboard = false
        options.view = false
        options.replay = try EvemuRecording.parse(recording)
        let environment = RunEnvironment(
            loop: loop, keyboardFD: slave, screenFD: slave, signals: ManualSignals(),
            jobControl: RecordingJobControl(loop: loop, terminalFD: slave), makeLink: { _, _ in link })
        let session = RunSession(
            config: config, options: options, environment: environment,
            logger: Logger(label: "in-run-calibration-test") { _ in SwiftLogNoOpLogHandler() }, sink: LogSink(fd: slave))
        try session.start()
        try loop.advance(by: .zero)
        link.set(.up)  // the replay starts once the link is up
        let start = loop.now()
        try loop.run(until: start.advanced(by: .seconds(5)))
        XCTAssertTrue(loop.isStopped, "the run ends with the replay")
        // The save runs on a helper thread; ending the run (its services stopped) finishes it, not loses it.
        _ = session.finish()

        let saved = try CarbridgeConfig.load(file: path, resolver: EventCodeNames())
        XCTAssertEqual(saved.steering.neutralDegrees, 10.0, "the roll's neutral is saved")
        XCTAssertEqual(saved.throttle.neutralDegrees, 5.0, "the pitch's neutral is saved with it")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("# written by the calibrate button\nneutral_deg = 10.0\n"), text)
        XCTAssertTrue(text.contains("pitch_axes = \"y,z\"\nneutral_deg = 5.0\ndeadzone_deg = 6.0"), text)
        XCTAssertEqual(link.texts, ["E,0,0,0"], "calibrating sends nothing (the engine stays off)")
    }
}
