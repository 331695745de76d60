import DriveConfig
import DriveCore
import DriveInput
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// `carbridge monitor`'s logic fed by an evemu replay on a manual-clock loop: the lines it prints
/// (raw events → controls ⇒ the frame a car would get) without a terminal, udev or wall time.
final class MonitorSessionTests: XCTestCase {
    /// An Xbox 360 pad (the header of Tests/DriveInputTests/Fixtures/xbox360-pad.evemu) pressing
    /// engine, Speed+ and steering full right.
    private let recording = """
        # EVEMU 1.3
        N: Microsoft X-Box 360 pad
        I: 0003 045e 028e 0114
        P: 00 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 db 7c
        B: 01 00 00 00 00 00 00 00 00
        B: 03 3f 00 03 00 00 00 00 00
        A: 00 -32768 32767 16 128 0
        A: 01 -32768 32767 16 128 0
        A: 02 0 255 0 0 0
        A: 03 -32768 32767 16 128 0
        A: 04 -32768 32767 16 128 0
        A: 05 0 255 0 0 0
        A: 10 -1 1 0 0 0
        A: 11 -1 1 0 0 0
        E: 0.100000 0001 013b 0001
        E: 0.100000 0000 0000 0000
        E: 0.150000 0001 013b 0000
        E: 0.150000 0000 0000 0000
        E: 0.200000 0001 0137 0001
        E: 0.200000 0000 0000 0000
        E: 0.250000 0001 0137 0000
        E: 0.250000 0000 0000 0000
        E: 0.300000 0003 0000 32767
        E: 0.300000 0000 0000 0000

        """

    func testReplayPrintsOneLinePerFrameWithControlsAndTheCarFrame() throws {
        let config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        let loop = try makeManualLoop()
        var options = MonitorSession.Options()
        options.replay = try EvemuRecording.parse(recording)
        options.replayName = "pad.evemu"
        var lines: [String] = []
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let session = try MonitorSession(config: config, options: options, loop: loop, logger: logger) { lines.append($0) }
        let start = loop.now()
        try session.run()
        XCTAssertLessThan(loop.now().duration(since: start), .seconds(2), "the run ends with the recording")

        XCTAssertEqual(lines.first, "monitor: " + MonitorSession.summary(config) + "; Ctrl-C stops")
        XCTAssertTrue(lines.first?.hasPrefix("monitor: steering by stick") ?? false, "\(lines)")
        XCTAssertEqual(lines.dropFirst().first, "+ replay \"Microsoft X-Box 360 pad\"")
        let pad = "replay \"Microsoft X-Box 360 pad\""
        // The pad (045e:028e) has a GameControllerDB entry: its layout is said once, and every code is
        // followed by its standard name.
        let layout = lines.dropFirst(2).first ?? ""
        XCTAssertTrue(layout.hasPrefix("  layout of \(pad): standard, from the built-in GameControllerDB line "), layout)
        XCTAssertTrue(layout.hasSuffix("(\"Xbox 360 Controller\")"), layout)
        XCTAssertEqual(Array(lines.dropFirst(3)), [
            "   0.000  \(pad)  BTN_START [start] down → engine / θ 0.0° / range 0  ⇒ (engine on, nothing sent yet)",
            "   0.050  \(pad)  BTN_START [start] up → — / θ 0.0° / range 0",
            "   0.100  \(pad)  BTN_TR [rightshoulder] down → speed_up / θ 0.0° / range 0  ⇒ M,0,10,1",
            "   0.150  \(pad)  BTN_TR [rightshoulder] up → — / θ 0.0° / range 0",
            "   0.200  \(pad)  ABS_X [leftx] 32767 (1.00) → steer +90.0° / θ +90.0° / range 2  ⇒ R,2,10,1",
            "   0.200  carbridge  end of recording → INPUT LOST / θ +90.0° / range 2  ⇒ R,2,0,1",
            "monitor: replay finished",
        ])
    }

    /// An 8BitDo Lite 2 (its GameControllerDB line maps `righttrigger:a4`, the pad's `ABS_GAS`, 0…255 with a
    /// flat of 15, and `rightx:a2`, its `ABS_Z`): the value printed is the one the mapping uses, and the
    /// speed is that value × 240 rounded down, as protocol §4 says.
    private let liteTwo = """
        # EVEMU 1.3
        N: 8BitDo Lite 2
        I: 0003 2dc8 5112 0111
        P: 00 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 ff 7f
        B: 01 00 00 00 00 00 00 00 00
        B: 03 27 06 03 00 00 00 00 00
        A: 00 0 255 0 15 0
        A: 01 0 255 0 15 0
        A: 02 0 255 0 15 0
        A: 05 0 255 0 15 0
        A: 09 0 255 0 15 0
        A: 0a 0 255 0 15 0
        A: 10 -1 1 0 0 0
        A: 11 -1 1 0 0 0
        E: 0.100000 0001 013b 0001
        E: 0.100000 0000 0000 0000
        E: 0.150000 0003 0009 64
        E: 0.150000 0000 0000 0000
        E: 0.200000 0003 0009 128
        E: 0.200000 0000 0000 0000
        E: 0.250000 0003 0002 200
        E: 0.250000 0000 0000 0000

        """

    func testATranslatedTriggerPrintsTheValueTheMappingUsesAndItsSpeed() throws {
        let config = try CarbridgeConfig.parse(
            text: "[throttle]\naxis = \"ABS_RZ\"\n", file: "pad.toml", resolver: EventCodeNames())
        let loop = try makeManualLoop()
        var options = MonitorSession.Options()
        options.replay = try EvemuRecording.parse(liteTwo)
        var lines: [String] = []
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let session = try MonitorSession(config: config, options: options, loop: loop, logger: logger) { lines.append($0) }
        try session.run()
        let pad = "replay \"8BitDo Lite 2\""
        XCTAssertTrue(lines.contains { $0.hasPrefix("  layout of \(pad): standard, from the built-in GameControllerDB line ") }, "\(lines)")
        XCTAssertEqual(lines.filter { $0.contains("\(pad)  ABS_") }, [
            "   0.050  \(pad)  ABS_GAS [righttrigger] 64 (0.20) → speed = 40 / θ 0.0° / range 0  ⇒ M,0,40,1",
            "   0.100  \(pad)  ABS_GAS [righttrigger] 128 (0.47) → speed = 110 / θ 0.0° / range 0  ⇒ M,0,110,1",
            "   0.150  \(pad)  ABS_Z [rightx] 200 (0.51) → — / θ 0.0° / range 0",
        ])
    }

    func testAnAccelerometerRecordingSteersByTilt() throws {
        let config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        XCTAssertEqual(config.steering.source, .stick)
        var options = MonitorSession.Options()
        options.replay = try EvemuRecording.parse("""
            # EVEMU 1.3
            N: Test Motion Sensors
            I: 0005 054c 0ce6 8100
            P: 40 00 00 00 00 00 00 00
            B: 00 0b 00 00 00 00 00 00 00
            B: 03 07 00 00 00 00 00 00 00
            A: 00 -32768 32767 16 0 8192
            A: 01 -32768 32767 16 0 8192
            A: 02 -32768 32767 16 0 8192
            E: 0.000000 0003 0002 8192
            E: 0.000000 0000 0000 0000

            """)
        options.replayName = "motion.evemu"
        var lines: [String] = []
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let session = try MonitorSession(
            config: config, options: options, loop: try makeManualLoop(), logger: logger) { lines.append($0) }
        XCTAssertEqual(session.config.steering.source, .tilt)
        XCTAssertEqual(lines, ["monitor: motion.evemu is an accelerometer recording: steering by tilt for this session"])
        try session.run()
        XCTAssertTrue(lines.dropFirst().first?.hasPrefix("monitor: steering by tilt (axes x,z") ?? false, "\(lines)")
        XCTAssertEqual(lines.last, "monitor: replay finished")
    }
}
