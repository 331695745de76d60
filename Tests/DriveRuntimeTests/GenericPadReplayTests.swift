import DriveConfig
import DriveCore
import DriveInput
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// A generic DragonRise pad (hid-generic codes) replayed through the coordinator with the default
/// config, through the API the coordinator has always had (`startReplay`): before the GameControllerDB
/// layouts none of its buttons did anything.
final class GenericPadReplayTests: XCTestCase {
    /// The pad as evemu-record shows it: 0079:0006 version 0x0110, BTN_TRIGGER…BTN_BASE6 (0x120…0x12b:
    /// bytes 36 = ff, 37 = 0f of the key bitmap), axes X Y Z RX RZ (0x2f) and HAT0X/HAT0Y (byte 2 = 03).
    /// Presses: BTN_BASE4 (start: engine), BTN_PINKIE (rightshoulder: Speed+), then ABS_X full right.
    private let recording = """
        # EVEMU 1.3
        N: DragonRise Inc.   Generic   USB  Joystick  
        I: 0003 0079 0006 0110
        P: 00 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 ff 0f 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 03 2f 00 03 00 00 00 00 00
        A: 00 0 255 0 15 0
        A: 01 0 255 0 15 0
        A: 02 0 255 0 15 0
        A: 03 0 255 0 15 0
        A: 05 0 255 0 15 0
        A: 10 -1 1 0 0 0
        A: 11 -1 1 0 0 0
        E: 0.000000 0001 0129 0001
        E: 0.000000 0000 0000 0000
        E: 0.050000 0001 0129 0000
        E: 0.050000 0000 0000 0000
        E: 0.100000 0001 0125 0001
        E: 0.100000 0000 0000 0000
        E: 0.150000 0001 0125 0000
        E: 0.150000 0000 0000 0000
        E: 0.200000 0003 0000 255
        E: 0.200000 0000 0000 0000

        """

    func testAGenericPadFromTheDBDrivesWithTheDefaultConfig() throws {
        let config = try CarbridgeConfig.defaults(resolver: EventCodeNames())
        let loop = try makeManualLoop()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let coordinator = try InputCoordinator(config: config, loop: loop, logger: logger)
        var controls: [Control] = []
        var finished = false
        coordinator.onControl = { controls.append($0) }
        coordinator.onReplayFinished = { finished = true; loop.stop() }
        let start = loop.now()
        coordinator.startReplay(try EvemuRecording.parse(recording))
        try loop.run(until: start.advanced(by: .seconds(2)))
        XCTAssertTrue(finished)
        XCTAssertEqual(controls, [.engine, .speedUp, .steer(90)], "\(controls)")
    }
}
