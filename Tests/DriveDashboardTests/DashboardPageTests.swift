import DriveConfig
import Foundation
import XCTest

@testable import DriveDashboard

/// What a run adds to the page, and the Content-Security-Policy that lets the camera in.
final class DashboardPageTests: XCTestCase {
    func testPolicyWithoutACameraAllowsNoImageOrigin() {
        let policy = ContentSecurityPolicy(html: DashboardPage.render(camera: nil, fingerprint: nil)).header
        XCTAssertTrue(policy.contains("img-src data: 'self';"), policy)
        XCTAssertTrue(policy.contains("manifest-src 'self'"), policy)
        XCTAssertFalse(policy.contains("http"), policy)
    }

    func testPolicyWithACameraAllowsExactlyItsOrigin() throws {
        let camera = try CameraURL(parsing: "http://192.168.4.1:81/stream?x=1")
        let policy = ContentSecurityPolicy(html: DashboardPage.render(camera: camera, fingerprint: nil), camera: camera).header
        XCTAssertTrue(policy.contains("img-src data: 'self' http://192.168.4.1:81;"), policy)
        XCTAssertEqual(policy.components(separatedBy: "http://").count, 2, "the camera's origin once, nothing else: \(policy)")
        XCTAssertTrue(policy.contains("default-src 'none'"), policy)
        XCTAssertTrue(policy.contains("connect-src 'self'"), policy)
    }

    /// A policy hash is the base64 SHA-256 of the exact text between the tags: the CSP specification's own example.
    func testInlineBlockHashesAreTheCSPSpecificationsOnes() {
        let html = "<p>x</p><script>alert('Hello, world.');</script><style>p{}</style><script></script>"
        let policy = ContentSecurityPolicy(html: html)
        XCTAssertEqual(policy.scripts, ["'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='", "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"])
        XCTAssertEqual(policy.styles.count, 1)
        XCTAssertTrue(policy.header.contains("script-src 'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng=' 'sha256-47DEQ"), policy.header)
    }

    /// Both pages run under a policy without `'unsafe-inline'`: each of their inline blocks is allowed by its
    /// hash, and they have no `on…=` handler or `style=` attribute, which a hash cannot allow.
    func testPagesNeedNoUnsafeInline() throws {
        let camera = try CameraURL(parsing: "http://192.168.4.1:81/stream")
        for (name, html) in [("operator", DashboardPage.render(camera: camera, fingerprint: "AB")), ("driver", DriverPage.html)] {
            let policy = ContentSecurityPolicy(html: html)
            XCTAssertFalse(policy.header.contains("unsafe"), "\(name): \(policy.header)")
            XCTAssertEqual(policy.scripts.count, html.components(separatedBy: "<script").count - 1, name)
            XCTAssertEqual(policy.styles.count, html.components(separatedBy: "<style").count - 1, name)
            XCTAssertGreaterThan(policy.scripts.count, 0, name)
            XCTAssertNil(html.range(of: #"<[^>]*\sstyle\s*="#, options: .regularExpression), "\(name) has a style attribute")
            XCTAssertNil(html.range(of: #"<[a-zA-Z][^>]*\son[a-z]+\s*="#, options: .regularExpression), "\(name) has an inline handler")
            XCTAssertTrue(policy.header.contains("frame-ancestors 'none'"), name)
        }
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
