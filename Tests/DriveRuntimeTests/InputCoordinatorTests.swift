import DriveConfig
import DriveCore
import DriveInput
import DriveRuntime
import DriveSystem
import DriveTestSupport
import Logging
import XCTest

/// The coordinator fed by an evemu replay of a motion sensor (the same path live devices take
/// after their bytes are decoded): the input-loss watchdog and the restore that follows it. On a
/// manual clock: the 1.2 s replay takes no wall time and the watchdog fires at an exact instant.
final class InputCoordinatorTests: XCTestCase {
    /// A motion sensor: gravity on z for `validMilliseconds`, then `zeroMilliseconds` of reports
    /// whose vector is zero (a sensor stuck at 0), then gravity again for 200 ms.
    private func recording(validMilliseconds: Int, zeroMilliseconds: Int) throws -> EvemuRecording {
        var lines = [
            "# EVEMU 1.3",
            "N: Test Motion Sensors",
            "I: 0005 054c 0ce6 8100",
            "P: 40 00 00 00 00 00 00 00",
            "B: 00 0b 00 00 00 00 00 00 00",
            "B: 03 07 00 00 00 00 00 00 00",
            "B: 04 20 00 00 00 00 00 00 00",
            "A: 00 -32768 32767 16 0 8192",
            "A: 01 -32768 32767 16 0 8192",
            "A: 02 -32768 32767 16 0 8192",
        ]
        var time = 0
        var stamp = 1
        func report(_ events: [String]) {
            let seconds = String(format: "%d.%06d", time / 1000, (time % 1000) * 1000)
            for event in events { lines.append("E: \(seconds) \(event)") }
            lines.append("E: \(seconds) 0004 0005 \(stamp)")
            lines.append("E: \(seconds) 0000 0000 0000")
            stamp += 1
            time += 20
        }
        report(["0003 0000 0", "0003 0001 0", "0003 0002 8192"])
        while time < validMilliseconds { report([]) }
        report(["0003 0002 0"])
        while time < validMilliseconds + zeroMilliseconds { report([]) }
        report(["0003 0002 8192"])
        let end = time + 200
        while time < end { report([]) }
        return try EvemuRecording.parse(lines.joined(separator: "\n") + "\n")
    }

    func testZeroVectorsAreNotSamplesAndTheSensorComingBackRestoresMotion() throws {
        let config = try CarbridgeConfig.parse(text: """
            [steering]
            source = "tilt"
            input_timeout_ms = 300
            """, file: "test.toml", resolver: EventCodeNames())
        let loop = try makeManualLoop()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let coordinator = try InputCoordinator(config: config, loop: loop, logger: logger)
        var controls: [(Control, Instant)] = []
        var finished = false
        coordinator.onControl = { controls.append(($0, loop.now())) }
        coordinator.onReplayFinished = { finished = true; loop.stop() }
        let start = loop.now()
        coordinator.startReplay(try recording(validMilliseconds: 200, zeroMilliseconds: 800))
        try loop.run(until: start.advanced(by: .seconds(3)))
        XCTAssertTrue(finished)

        let safety = controls.filter { $0.0 == .inputLost || $0.0 == .inputRestored }
        XCTAssertEqual(safety.map(\.0), [.inputLost, .inputRestored],
                       "zero vectors must not keep the sensor alive: \(controls.map(\.0))")
        if let lost = safety.first {
            // The last usable sample is the report at 180 ms (the one at 200 ms is the zero vector);
            // input_timeout_ms = 300 later, the input is lost.
            XCTAssertEqual(lost.1.duration(since: start), .milliseconds(480), "input lost into the replay")
        }
    }
}
