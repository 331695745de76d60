import DriveConfig
import Foundation
import XCTest

/// `ConfigFileEditor.saveLinkURL`: what the dashboard's Bluetooth search saves when the operator picks a car.
final class SaveLinkURLTests: ConfigFileTestCase {
    func testReplacesTheURLKeepingEveryOtherLine() throws {
        let text = """
            # the red car
            [link]
              url = "tcp://127.0.0.1:5555"   # the simulator
            max_in_flight = 2

            [drive]
            max_speed = 120   # kiosk cap
            """
        let path = try file(text)
        XCTAssertEqual(try ConfigFileEditor.saveLinkURL("rfcomm://98:D3:31:F5:2A:11", file: path, resolver: LibevdevNames()), path)
        let saved = try contents(path)
        XCTAssertEqual(saved, text.replacingOccurrences(
            of: #"  url = "tcp://127.0.0.1:5555"   # the simulator"#, with: #"  url = "rfcomm://98:D3:31:F5:2A:11""#))
        let config = try CarbridgeConfig.parse(text: saved, file: path)
        XCTAssertEqual(config.link.url, "rfcomm://98:D3:31:F5:2A:11")
        XCTAssertEqual(config.drive.maxSpeed, 120)
    }

    func testAddsTheKeyOrTheTable() throws {
        let path = try file("[link]\nterminator = \"crlf\"\n")
        try ConfigFileEditor.saveLinkURL("rfcomm://98:D3:31:F5:2A:11", file: path, resolver: LibevdevNames())
        XCTAssertEqual(try contents(path), "[link]\nurl = \"rfcomm://98:D3:31:F5:2A:11\"\nterminator = \"crlf\"\n")

        let other = try file("# kiosk\n[drive]\nmax_speed = 120\n")
        try ConfigFileEditor.saveLinkURL("rfcomm://00:1A:7D:DA:71:13", file: other, resolver: LibevdevNames())
        XCTAssertEqual(try contents(other), "# kiosk\n[drive]\nmax_speed = 120\n\n[link]\nurl = \"rfcomm://00:1A:7D:DA:71:13\"\n")

        let empty = try file("")
        try ConfigFileEditor.saveLinkURL("rfcomm://00:1A:7D:DA:71:13", file: empty, resolver: LibevdevNames())
        XCTAssertEqual(try CarbridgeConfig.parse(text: try contents(empty), file: empty).link.url, "rfcomm://00:1A:7D:DA:71:13")
    }

    func testAnInvalidResultLeavesTheFileAsItWasWithItsFileLineErrors() throws {
        let text = "[link]\nurl = \"sim\"\n[drive]\nmax_speed = 125\n"
        let path = try file(text)
        XCTAssertThrowsError(try ConfigFileEditor.saveLinkURL("rfcomm://98:D3:31:F5:2A:11", file: path, resolver: LibevdevNames())) { error in
            XCTAssertEqual("\(error)", "\(path):4: drive.max_speed: 125 is not a multiple of 10 (speeds go in steps of 10)")
        }
        XCTAssertEqual(try contents(path), text)
        // Not a link URL carbridge takes: refused by the config's own check, file untouched.
        let valid = try file("[link]\nurl = \"sim\"\n")
        XCTAssertThrowsError(try ConfigFileEditor.saveLinkURL("bogus://x", file: valid, resolver: LibevdevNames())) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(valid):2: link.url: "), "\(error)")
        }
        XCTAssertEqual(try contents(valid), "[link]\nurl = \"sim\"\n")
    }

    func testNoConfigFileIsAnErrorWithTheReason() {
        XCTAssertThrowsError(try ConfigFileEditor.saveLinkURL("rfcomm://98:D3:31:F5:2A:11", file: nil, resolver: LibevdevNames())) { error in
            XCTAssertTrue("\(error)".contains("started without a config file"), "\(error)")
            XCTAssertTrue("\(error)".contains("--config"), "\(error)")
        }
        XCTAssertThrowsError(try ConfigFileEditor.saveLinkURL("rfcomm://98:D3:31:F5:2A:11", file: "/nonexistent/my.toml", resolver: LibevdevNames())) { error in
            XCTAssertEqual("\(error)", "/nonexistent/my.toml: cannot read the config file (no such file)")
        }
    }
}
