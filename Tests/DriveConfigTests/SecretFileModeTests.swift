import DriveConfig
import Glibc
import XCTest

/// A config file with the dashboard's token is named when every user can read it.
final class SecretFileModeTests: XCTestCase {
    private func file(mode: mode_t) throws -> String {
        let path = NSTemporaryDirectory() + "carbridge-secret-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).toml"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("[dashboard]\ntoken = \"x\"\n".utf8)))
        XCTAssertEqual(chmod(path, mode), 0)
        addTeardownBlock { unlink(path) }
        return path
    }

    func testAWorldReadableFileIsNamedWithTheFix() throws {
        let path = try file(mode: 0o644)
        let warning = try XCTUnwrap(SecretFileMode.warning(tokenIn: path))
        XCTAssertTrue(warning.hasPrefix("\(path) holds [dashboard] token"), warning)
        XCTAssertTrue(warning.contains("mode 0644") && warning.contains("chmod o-r \(path)"), warning)
    }

    func testAGroupReadableFileIsFine() throws {
        XCTAssertNil(SecretFileMode.warning(tokenIn: try file(mode: 0o640)))
        XCTAssertNil(SecretFileMode.warning(tokenIn: try file(mode: 0o600)))
    }

    func testAMissingFileSaysNothingHere() {
        XCTAssertNil(SecretFileMode.warning(tokenIn: "/nonexistent/carbridge.toml"))
    }
}
