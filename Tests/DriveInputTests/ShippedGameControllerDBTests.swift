import XCTest

@testable import DriveInput

/// The DB built into the binary.
final class ShippedGameControllerDBTests: XCTestCase {
    func testTheEmbeddedTextIsTheDataFileAndEveryLineParses() throws {
        // data/gamecontrollerdb.txt is what scripts/update-gamecontrollerdb.sh embeds; a stale generated file fails here.
        let root = URLPath.repositoryRoot(from: #filePath)
        let data = try XCTUnwrap(try? GameControllerDB.readFile(root + "/data/gamecontrollerdb.txt").get())
        XCTAssertEqual(ShippedGameControllerDB.text + "\n", data)
        var db = GameControllerDB()
        XCTAssertEqual(db.add(text: ShippedGameControllerDB.text, source: .shipped), [])
        XCTAssertGreaterThan(db.entries.count, 700)
        XCTAssertTrue(db.entries.allSatisfy { $0.mapping.platform == "Linux" })
        let dragonRise = SDLJoystickGUID(bustype: 3, vendor: 0x0079, product: 0x0006, version: 0x0110, name: "DragonRise Inc.   Generic   USB  Joystick  ")
        XCTAssertEqual(db.entry(for: dragonRise)?.mapping.name, "USB Gamepad")
    }
}

/// Paths relative to this checkout.
enum URLPath {
    /// The repository root: three levels above a file in Tests/<target>/.
    static func repositoryRoot(from file: String) -> String {
        var parts = file.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }
}
