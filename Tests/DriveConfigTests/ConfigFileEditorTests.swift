import DriveConfig
import Foundation
import XCTest

final class ConfigFileEditorTests: XCTestCase {
    private let sample = """
        # my car
        [link]
        url = "sim"   # the built-in car

        [steering]
        # tilt steering
        source = "tilt"
          neutral_deg = 0.0   # set by calibrate
        sensitivity = 1.5

        [buttons]
        BTN_START = "engine"
        """

    func testReplacesExistingKeyKeepingCommentsAndIndent() throws {
        let edited = ConfigFileEditor.set(in: sample, table: "steering", key: "neutral_deg", value: "-4.5")
        let lines = edited.components(separatedBy: "\n")
        XCTAssertTrue(lines.contains("  neutral_deg = -4.5"), edited)
        XCTAssertFalse(edited.contains("neutral_deg = 0.0"))
        // Every other line is untouched, comments included.
        let before = sample.components(separatedBy: "\n")
        XCTAssertEqual(lines.count, before.count)
        for (old, new) in zip(before, lines) where !old.contains("neutral_deg") {
            XCTAssertEqual(old, new)
        }
        let config = try CarbridgeConfig.parse(text: edited, file: "edited.toml")
        XCTAssertEqual(config.steering.neutralDegrees, -4.5)
        XCTAssertEqual(config.steering.sensitivity, 1.5)
    }

    func testSameKeyInAnotherTableIsNotTouched() {
        let text = "[link]\nurl = \"sim\"\n[steering]\nsource = \"tilt\"\n"
        let edited = ConfigFileEditor.set(in: text, table: "link", key: "source", value: "\"x\"")
        XCTAssertTrue(edited.contains("[steering]\nsource = \"tilt\""), edited)
        XCTAssertTrue(edited.contains("[link]\nsource = \"x\"\nurl = \"sim\""), edited)
    }

    func testInsertsUnderExistingTable() throws {
        let text = "[steering]\nsource = \"tilt\"\n\n[drive]\nmax_speed = 120\n"
        let edited = ConfigFileEditor.set(in: text, table: "steering", key: "neutral_deg", value: "12.3")
        XCTAssertEqual(edited, "[steering]\nneutral_deg = 12.3\nsource = \"tilt\"\n\n[drive]\nmax_speed = 120\n")
        let config = try CarbridgeConfig.parse(text: edited, file: "edited.toml")
        XCTAssertEqual(config.steering.neutralDegrees, 12.3)
        XCTAssertEqual(config.drive.maxSpeed, 120)
    }

    func testAppendsNewTable() throws {
        let text = "[drive]\nmax_speed = 120"
        let edited = ConfigFileEditor.set(in: text, table: "steering", key: "neutral_deg", value: "-7.0")
        XCTAssertEqual(edited, "[drive]\nmax_speed = 120\n\n[steering]\nneutral_deg = -7.0\n")
        let config = try CarbridgeConfig.parse(text: edited, file: "edited.toml")
        XCTAssertEqual(config.steering.neutralDegrees, -7)
        XCTAssertEqual(config.drive.maxSpeed, 120)
    }

    func testEmptyTextGetsTheTable() throws {
        let edited = ConfigFileEditor.set(in: "", table: "steering", key: "neutral_deg", value: "3.0")
        XCTAssertEqual(try CarbridgeConfig.parse(text: edited, file: "e.toml").steering.neutralDegrees, 3)
    }

    func testCommentedOutKeyIsNotReplaced() throws {
        let text = "[steering]\n# neutral_deg = 9.0\nsource = \"tilt\"\n"
        let edited = ConfigFileEditor.set(in: text, table: "steering", key: "neutral_deg", value: "1.0")
        XCTAssertTrue(edited.contains("# neutral_deg = 9.0"), edited)
        XCTAssertEqual(try CarbridgeConfig.parse(text: edited, file: "e.toml").steering.neutralDegrees, 1)
    }

    func testFileRoundTrip() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-editor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("carbridge.toml").path
        try sample.write(toFile: path, atomically: true, encoding: .utf8)

        try ConfigFileEditor.set(file: path, table: "steering", key: "neutral_deg", value: "-12.5")
        try ConfigFileEditor.set(file: path, table: "drive", key: "max_speed", value: "100")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("# my car\n[link]\nurl = \"sim\"   # the built-in car\n"), text)
        XCTAssertTrue(text.contains("# tilt steering"))
        let config = try CarbridgeConfig.parse(text: text, file: path)
        XCTAssertEqual(config.steering.neutralDegrees, -12.5)
        XCTAssertEqual(config.drive.maxSpeed, 100)
        XCTAssertEqual(config.steering.source, .tilt)
        XCTAssertEqual(config.buttons.map(\.button), ["BTN_START"])
        // Only the config file is left: the atomic write cleaned up after itself.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["carbridge.toml"])
    }

    func testMissingFileThrows() {
        XCTAssertThrowsError(
            try ConfigFileEditor.set(file: "/nonexistent/carbridge.toml", table: "steering", key: "neutral_deg", value: "1.0"))
    }
}
