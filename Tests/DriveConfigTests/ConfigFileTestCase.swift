import Foundation
import XCTest

/// A test case with a private temporary directory holding one config file (`my.toml`), removed afterwards:
/// the set-up the config editor's tests share.
class ConfigFileTestCase: XCTestCase {
    private(set) var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` to `my.toml` in the directory; returns its path.
    func file(_ text: String) throws -> String {
        let path = directory.appendingPathComponent("my.toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The file's text now.
    func contents(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }
}
