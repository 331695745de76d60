import DriveConfig
import Foundation
import XCTest

/// `ConfigFileEditor.saveNeutral`: what `calibrate`, the monitor's and `run`'s calibrate button save.
final class SaveNeutralTests: ConfigFileTestCase {
    func testRoundsToATenthKeepingEveryOtherLine() throws {
        let text = """
            # my laptop
            [steering]
            source = "tilt"   # tilt it
              neutral_deg = 0.0   # set by calibrate
            sensitivity = 1.5

            [buttons.long_press]
            BTN_SELECT = "calibrate"
            """
        let path = try file(text)
        XCTAssertEqual(try ConfigFileEditor.saveNeutral(-2.8449, file: path, resolver: LibevdevNames()), -2.8)
        let saved = try contents(path)
        XCTAssertEqual(saved, text.replacingOccurrences(of: "  neutral_deg = 0.0   # set by calibrate", with: "  neutral_deg = -2.8"))
        XCTAssertEqual(try CarbridgeConfig.parse(text: saved, file: path).steering.neutralDegrees, -2.8)
        XCTAssertEqual(ConfigFileEditor.roundedNeutral(12.35), 12.4)
        XCTAssertEqual(ConfigFileEditor.roundedNeutral(-0.04), 0)
    }

    func testAddsTheKeyOrTheTable() throws {
        let path = try file("[steering]\nsource = \"tilt\"\n")
        try ConfigFileEditor.saveNeutral(7.06, file: path, resolver: LibevdevNames())
        XCTAssertEqual(try contents(path), "[steering]\nneutral_deg = 7.1\nsource = \"tilt\"\n")

        let other = try file("[drive]\nmax_speed = 120\n")
        try ConfigFileEditor.saveNeutral(-10, file: other, resolver: LibevdevNames())
        XCTAssertEqual(try contents(other), "[drive]\nmax_speed = 120\n\n[steering]\nneutral_deg = -10.0\n")
    }

    func testAnInvalidResultLeavesTheFileAsItWas() throws {
        // The file is broken elsewhere (edited by hand since the run started): nothing is written.
        let text = "[steering]\nneutral_deg = 1.0\n[drive]\nmax_speed = 125\n"
        let path = try file(text)
        XCTAssertThrowsError(try ConfigFileEditor.saveNeutral(3, file: path, resolver: LibevdevNames())) { error in
            XCTAssertEqual("\(error)", "\(path):4: drive.max_speed: 125 is not a multiple of 10 (speeds go in steps of 10)")
        }
        XCTAssertEqual(try contents(path), text)
        // Out of neutral_deg's range.
        let valid = try file("[steering]\nneutral_deg = 1.0\n")
        XCTAssertThrowsError(try ConfigFileEditor.saveNeutral(200, file: valid, resolver: LibevdevNames())) { error in
            XCTAssertTrue("\(error)".contains("steering.neutral_deg: 200.0 is out of range"), "\(error)")
        }
        XCTAssertEqual(try contents(valid), "[steering]\nneutral_deg = 1.0\n")
        XCTAssertThrowsError(try ConfigFileEditor.saveNeutral(.nan, file: valid, resolver: LibevdevNames()))
        XCTAssertEqual(try contents(valid), "[steering]\nneutral_deg = 1.0\n")
    }

    func testAMissingFileIsAnError() {
        XCTAssertThrowsError(try ConfigFileEditor.saveNeutral(1, file: "/nonexistent/my.toml", resolver: LibevdevNames())) { error in
            XCTAssertEqual("\(error)", "/nonexistent/my.toml: cannot read the config file (no such file)")
        }
    }

    func testOnlyTheConfigFileIsLeft() throws {
        let path = try file("[steering]\nneutral_deg = 0.0\n")
        try ConfigFileEditor.saveNeutral(4.44, file: path, resolver: LibevdevNames())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["my.toml"])
    }
}
