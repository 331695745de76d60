import DriveCore
import DriveSystem
import Foundation
import XCTest

@testable import DriveInput

/// Helpers shared by the DriveInput tests.
enum TestSupport {
    static func fixtureURL(_ relativePath: String) throws -> URL {
        let root = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures", withExtension: nil), "Fixtures missing from the bundle")
        return root.appendingPathComponent(relativePath)
    }

    static func fixtureText(_ relativePath: String) throws -> String {
        try String(contentsOf: fixtureURL(relativePath), encoding: .utf8)
    }

    /// Copies a fixture directory to a fresh temporary directory and returns its path.
    static func copyFixtureDirectory(_ relativePath: String) throws -> String {
        let source = try fixtureURL(relativePath)
        let target = FileManager.default.temporaryDirectory
            .appendingPathComponent("carbridge-input-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source, to: target)
        return target.path
    }

    static func key(_ code: UInt16, _ value: Int32) -> InputEvent {
        InputEvent(type: EvdevCode.evKey, code: code, value: value)
    }

    static func abs(_ code: UInt16, _ value: Int32) -> InputEvent {
        InputEvent(type: EvdevCode.evAbs, code: code, value: value)
    }

    static let syn = InputEvent(type: EvdevCode.evSyn, code: EvdevCode.synReport, value: 0)
    static let dropped = InputEvent(type: EvdevCode.evSyn, code: EvdevCode.synDropped, value: 0)

    /// Runs `loop` until `condition` holds or `seconds` pass (never hangs).
    static func run(_ loop: EventLoop, seconds: Double = 2, until condition: () -> Bool) throws {
        let deadline = loop.now().advanced(by: .milliseconds(Int64(seconds * 1000)))
        while !condition() && loop.now() < deadline {
            try loop.runOnce(timeout: deadline.duration(since: loop.now()))
        }
    }
}
