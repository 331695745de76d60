import DriveConfig
import Foundation
import XCTest

@testable import DriveDashboard

/// What a run adds to the page, and the Content-Security-Policy that lets the camera in.
final class DashboardPageTests: XCTestCase {
    func testPolicyWithoutACameraAllowsNoImageOrigin() {
        let policy = DashboardServer.contentSecurityPolicy(camera: nil)
        XCTAssertTrue(policy.contains("img-src data: 'self';"), policy)
        XCTAssertTrue(policy.contains("manifest-src 'self'"), policy)
        XCTAssertFalse(policy.contains("http"), policy)
    }

    func testPolicyWithACameraAllowsExactlyItsOrigin() throws {
        let camera = try CameraURL(parsing: "http://192.168.4.1:81/stream?x=1")
        let policy = DashboardServer.contentSecurityPolicy(camera: camera)
        XCTAssertTrue(policy.contains("img-src data: 'self' http://192.168.4.1:81;"), policy)
        XCTAssertEqual(policy.components(separatedBy: "http://").count, 2, "the camera's origin once, nothing else: \(policy)")
        XCTAssertTrue(policy.contains("default-src 'none'"), policy)
        XCTAssertTrue(policy.contains("connect-src 'self'"), policy)
    }

    func testPageShowsTheCameraOnlyWhenSet() throws {
        let plain = DashboardPage.render(camera: nil, fingerprint: nil)
        XCTAssertFalse(plain.contains("id=\"camera\""))
        XCTAssertFalse(plain.contains("tls-fingerprint"))
        let camera = try CameraURL(parsing: "https://cam.local/stream?a=1&b=2")
        let page = DashboardPage.render(camera: camera, fingerprint: "AB:CD")
        XCTAssertTrue(page.contains(#"<img id="camera" src="https://cam.local/stream?a=1&amp;b=2""#))
        XCTAssertTrue(page.contains(#"<span id="tls-fingerprint">AB:CD</span>"#))
    }
}
