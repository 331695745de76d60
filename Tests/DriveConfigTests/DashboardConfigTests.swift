import DriveConfig
import Foundation
import XCTest

/// `[dashboard]` in the config file, and its rules: controls on a non-loopback address need a token and
/// HTTPS (or `allow_http`); `tls = "files"` needs readable PEM files; `camera_url` is an absolute http(s) URL.
final class DashboardConfigTests: XCTestCase {
    private func load(_ text: String) throws -> CarbridgeConfig {
        try CarbridgeConfig.load(text: text, file: "t.toml")
    }

    private func errors(_ text: String) -> [String] {
        do throws(ConfigErrors) {
            _ = try CarbridgeConfig.load(text: text, file: "t.toml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testOffByDefault() throws {
        XCTAssertNil(try load("").dashboard.listen)
        XCTAssertFalse(try load("").dashboard.controls)
    }

    func testParses() throws {
        let config = try load("[dashboard]\nlisten = \"127.0.0.1:8080\"\ncontrols = true\n")
        XCTAssertEqual(config.dashboard.listen, ListenAddress(host: "127.0.0.1", port: 8080))
        XCTAssertTrue(config.dashboard.controls)
        XCTAssertNil(config.dashboard.token)
        let v6 = try load("[dashboard]\nlisten = \"[::1]:9000\"\n")
        XCTAssertEqual(v6.dashboard.listen?.host, "::1")
        XCTAssertEqual(v6.dashboard.listen?.isLoopback, true)
    }

    func testControlsOnANonLoopbackAddressNeedAToken() throws {
        XCTAssertEqual(
            errors("[dashboard]\nlisten = \"0.0.0.0:8080\"\ncontrols = true\n"),
            ["t.toml:3: dashboard.controls: controls on a non-loopback address (0.0.0.0:8080) need a token: set [dashboard] token, or listen on 127.0.0.1"])
        XCTAssertEqual(errors("[dashboard]\nlisten = \"0.0.0.0:8080\"\ncontrols = false\n"), [], "view only is fine")
        XCTAssertEqual(errors("[dashboard]\nlisten = \"0.0.0.0:8080\"\ncontrols = true\ntoken = \"0123456789abcdef\"\ntls = \"self-signed\"\n"), [])
    }

    func testTiltRate() throws {
        XCTAssertEqual(try load("").dashboard.tiltHz, 20)
        XCTAssertEqual(try load("[dashboard]\ntilt_hz = 40\n").dashboard.tiltHz, 40)
        XCTAssertEqual(errors("[dashboard]\ntilt_hz = 41\n").count, 1, "above the tab's message limit")
        XCTAssertEqual(errors("[dashboard]\ntilt_hz = 4\n").count, 1)
    }

    private static let lan = "[dashboard]\nlisten = \"0.0.0.0:8080\"\ncontrols = true\ntoken = \"0123456789abcdef\"\n"

    func testControlsOverPlainHTTPOffLoopbackNeedAllowHTTP() {
        XCTAssertEqual(
            errors(Self.lan),
            ["t.toml:3: dashboard.controls: controls on a non-loopback address (0.0.0.0:8080) over plain HTTP: phones get no "
                + "tilt sensors over plain HTTP (browsers give deviceorientation only to secure contexts) and the token travels "
                + "in clear: set tls = \"self-signed\" (or cert/key), or allow_http = true"])
        XCTAssertEqual(errors(Self.lan + "allow_http = true\n"), [])
        XCTAssertEqual(errors(Self.lan + "tls = \"off\"\nallow_http = true\n"), [])
        XCTAssertEqual(errors("[dashboard]\nlisten = \"127.0.0.1:8080\"\ncontrols = true\n"), [], "loopback is a secure context")
        XCTAssertEqual(errors("[dashboard]\nlisten = \"0.0.0.0:8080\"\n"), [], "view only over HTTP is fine")
    }

    func testTLSModes() throws {
        XCTAssertEqual(try load("").dashboard.tls, .off)
        XCTAssertEqual(try load("[dashboard]\ntls = \"self-signed\"\n").dashboard.tls, .selfSigned)
        let directory = try temporaryDirectory()
        let cert = directory + "/c.pem"
        let key = directory + "/k.pem"
        try Self.certificatePEM.write(toFile: cert, atomically: true, encoding: .utf8)
        try Self.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        let files = try load("[dashboard]\ntls = \"files\"\ncert = \"\(cert)\"\nkey = \"\(key)\"\n")
        XCTAssertEqual(files.dashboard.tls, .files(cert: cert, key: key))
        XCTAssertTrue(errors("[dashboard]\ntls = \"on\"\n").first?.contains(#""off", "self-signed", "files""#) ?? false,
                      "\(errors("[dashboard]\ntls = \"on\"\n"))")
    }

    func testCertificateFileErrorsNameTheKeyAndTheFile() throws {
        let directory = try temporaryDirectory()
        let cert = directory + "/c.pem"
        let key = directory + "/k.pem"
        let garbage = directory + "/garbage.pem"
        try Self.certificatePEM.write(toFile: cert, atomically: true, encoding: .utf8)
        try Self.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        try "hello\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        func files(_ body: String) -> [String] { errors("[dashboard]\ntls = \"files\"\n" + body) }
        XCTAssertEqual(files(""), [#"t.toml:2: dashboard.tls: tls = "files" needs cert and key (PEM files)"#])
        XCTAssertEqual(files("cert = \"\(cert)\"\n"),
                       ["t.toml:3: dashboard.cert: cert and key go together: key (the private key's PEM file) is missing"])
        XCTAssertEqual(files("key = \"\(key)\"\n"),
                       ["t.toml:3: dashboard.key: cert and key go together: cert (the certificate's PEM file) is missing"])
        XCTAssertEqual(files("cert = \"\(directory)/none.pem\"\nkey = \"\(key)\"\n"),
                       ["t.toml:3: dashboard.cert: cert: cannot read \(directory)/none.pem: no such file"])
        XCTAssertEqual(files("cert = \"\(garbage)\"\nkey = \"\(key)\"\n"),
                       ["t.toml:3: dashboard.cert: cert: \(garbage) is not a PEM certificate (no -----BEGIN CERTIFICATE----- block)"])
        XCTAssertEqual(files("cert = \"\(cert)\"\nkey = \"\(cert)\"\n"),
                       ["t.toml:4: dashboard.key: key: \(cert) is not a PEM private key (no -----BEGIN PRIVATE KEY----- block)"])
        let broken = directory + "/broken.pem"
        try "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n".write(toFile: broken, atomically: true, encoding: .utf8)
        XCTAssertEqual(files("cert = \"\(broken)\"\nkey = \"\(key)\"\n"),
                       ["t.toml:3: dashboard.cert: cert: \(broken) is not a PEM certificate: a line of its CERTIFICATE block is not base64"])
        XCTAssertEqual(errors("[dashboard]\ncert = \"\(cert)\"\nkey = \"\(key)\"\n"),
                       [#"t.toml:2: dashboard.cert: cert and key are read only with tls = "files" (tls is "off")"#])
        XCTAssertEqual(files("cert = \"\(cert)\"\nkey = \"\(key)\"\n"), [])
    }

    func testCameraURL() throws {
        XCTAssertNil(try load("").dashboard.cameraURL)
        let camera = try XCTUnwrap(try load("[dashboard]\ncamera_url = \"http://192.168.4.1:81/stream\"\n").dashboard.cameraURL)
        XCTAssertEqual(camera.origin, "http://192.168.4.1:81")
        XCTAssertTrue(camera.isPlainHTTP)
        XCTAssertEqual(try CameraURL(parsing: "HTTPS://Cam.Local/mjpeg?q=1").origin, "https://cam.local")
        XCTAssertEqual(try CameraURL(parsing: "https://[fd00::2]:8443/").origin, "https://[fd00::2]:8443")
        for (bad, reason) in [
            ("ftp://cam/stream", "is not an absolute http:// or https:// URL"), ("/stream", "is not an absolute"),
            ("http://", "has no host"), ("http://cam/a b", "contains a space"), ("http://cam/\\\"x", "contains '\"'"),
            ("http://*:81/", "contains '*'"), ("http://cam:99999/", "the port must be a number"),
            ("http://user:pw@cam/", "user names or passwords"), ("http://cam/;x", "contains ';'"),
        ] {
            let found = errors("[dashboard]\ncamera_url = \"\(bad)\"\n")
            XCTAssertEqual(found.count, 1, bad)
            XCTAssertTrue(found.first?.contains("dashboard.camera_url") == true && found.first?.contains(reason) == true, "\(bad): \(found)")
        }
    }

    func testHTTPCameraOnAnHTTPSPageIsAWarningNotAnError() throws {
        let https = try load("[dashboard]\ntls = \"self-signed\"\ncamera_url = \"http://192.168.4.1:81/stream\"\n")
        XCTAssertTrue(https.dashboard.cameraWarning?.contains("mixed content") ?? false)
        XCTAssertNil(try load("[dashboard]\ncamera_url = \"http://192.168.4.1:81/stream\"\n").dashboard.cameraWarning)
        XCTAssertNil(try load("[dashboard]\ntls = \"self-signed\"\ncamera_url = \"https://cam/stream\"\n").dashboard.cameraWarning)
    }

    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-dashboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }

    /// A self-signed P-256 certificate and its key (`openssl req -x509`): only their form matters here.
    static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBvjCCAWOgAwIBAgIUbsP31xX5cqjz0jvwZY1o2TBv3mswCgYIKoZIzj0EAwIw
        FDESMBAGA1UEAwwJY2FyYnJpZGdlMB4XDTI2MTEyNzE2NDEwM1oXDTI2MTIyNzE2
        NDEwM1owFDESMBAGA1UEAwwJY2FyYnJpZGdlMFkwEwYHKoZIzj0CAQYIKoZIzj0D
        AQcDQgAEmShkbFCVf5n7JzIYRlQChMYQDDE8EVqvjmR02n2I+JJXyiZJba5RbdIf
        uTZFIbupP3wYGI1aOapw27G1dJrmA6OBkjCBjzAdBgNVHQ4EFgQU2A249CZPLP+d
        5arYuXsiRK6cU7cwHwYDVR0jBBgwFoAU2A249CZPLP+d5arYuXsiRK6cU7cwGgYD
        VR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MAwGA1UdEwEB/wQCMAAwEwYDVR0lBAww
        CgYIKwYBBQUHAwEwDgYDVR0PAQH/BAQDAgeAMAoGCCqGSM49BAMCA0kAMEYCIQDv
        1jyjIQBgmLVKNKxjjlVeRDz8XFpCZvJnpEKrTxiV0wIhALi1TR+EkWvsiO49WKST
        kyo+95/W0QbjtDMncNKA0ceP
        -----END CERTIFICATE-----
        """
    static let keyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjGfCEuoA8KbNsF/f
        aRZVX3YrYr1cxOpz56ZDLhcbl/ShRANCAASZKGRsUJV/mfsnMhhGVAKExhAMMTwR
        Wq+OZHTafYj4klfKJkltrlFt0h+5NkUhu6k/fBgYjVo5qnDbsbV0muYD
        -----END PRIVATE KEY-----
        """

    func testBadValues() {
        XCTAssertEqual(errors("[dashboard]\nlisten = \"8080\"\n"), [#"t.toml:2: dashboard.listen: "8080" is not HOST:PORT (e.g. "127.0.0.1:8080")"#])
        XCTAssertEqual(errors("[dashboard]\nlisten = \"127.0.0.1:99999\"\n"), [#"t.toml:2: dashboard.listen: "127.0.0.1:99999": the port must be a number 0…65535"#])
        XCTAssertEqual(errors("[dashboard]\nlisten = \"::1:80\"\n"), [#"t.toml:2: dashboard.listen: "::1:80": write an IPv6 address in brackets, e.g. "[::1]:8080""#])
        XCTAssertEqual(errors("[dashboard]\nlisten = \"example.com:80\"\n"), [#"t.toml:2: dashboard.listen: "example.com:80": the host must be an IPv4 address, [IPv6] or localhost"#])
        XCTAssertTrue(errors("[dashboard]\ntoken = \"short\"\n").first?.contains("at least 12") ?? false)
        XCTAssertTrue(errors("[dashboard]\nport = 80\n").first?.contains("unknown key") ?? false)
    }

    func testLoopback() throws {
        XCTAssertTrue(try ListenAddress(parsing: "127.0.0.1:1").isLoopback)
        XCTAssertTrue(try ListenAddress(parsing: "127.1.2.3:1").isLoopback)
        XCTAssertTrue(try ListenAddress(parsing: "localhost:1").isLoopback)
        XCTAssertFalse(try ListenAddress(parsing: "0.0.0.0:1").isLoopback)
        XCTAssertFalse(try ListenAddress(parsing: "192.168.1.2:1").isLoopback)
        XCTAssertFalse(try ListenAddress(parsing: "[::]:1").isLoopback)
    }
}

/// `[dashboard] join` and `url`.
final class DashboardJoinConfigTests: XCTestCase {
    private func errors(_ text: String) -> [String] {
        do throws(ConfigErrors) {
            _ = try CarbridgeConfig.load(text: text, file: "t.toml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testJoinDefaultsToOnceAndShowsOnlyWithControlsAndAToken() throws {
        var config = try CarbridgeConfig.load(text: "", file: "t.toml")
        XCTAssertEqual(config.dashboard.join, .once)
        XCTAssertNil(config.dashboard.url)
        XCTAssertEqual(config.dashboard.scheme, "http")
        XCTAssertFalse(config.dashboard.showsJoinCode, "no controls")
        config.dashboard.controls = true
        XCTAssertFalse(config.dashboard.showsJoinCode, "no token: nothing to stand in for")
        config.dashboard.token = "0123456789abcdef"
        XCTAssertTrue(config.dashboard.showsJoinCode)
        config.dashboard.join = .off
        XCTAssertFalse(config.dashboard.showsJoinCode)
        let perTurn = try CarbridgeConfig.load(
            text: "[kiosk]\nsession_limit_s = 120\n[dashboard]\njoin = \"per-turn\"\nurl = \"http://kiosk.local:8080/\"\n", file: "t.toml")
        XCTAssertEqual(perTurn.dashboard.join, .perTurn)
        XCTAssertEqual(perTurn.dashboard.url, "http://kiosk.local:8080", "the trailing / dropped")
    }

    func testPerTurnNeedsATurnLimit() {
        XCTAssertEqual(errors("[dashboard]\njoin = \"per-turn\"\n"), [
            #"t.toml:2: dashboard.join: join = "per-turn" needs [kiosk] session_limit_s (a turn to end); use "once" without a turn limit"#
        ])
        XCTAssertEqual(errors("[kiosk]\nsession_limit_s = 60\n[dashboard]\njoin = \"per-turn\"\n"), [])
        XCTAssertTrue(errors("[dashboard]\njoin = \"always\"\n").first?.contains("\"off\"") ?? false)
    }

    func testURLValues() {
        XCTAssertEqual(errors("[dashboard]\nurl = \"https://[fe80::1]:8443\"\n"), [])
        XCTAssertEqual(errors("[dashboard]\nurl = \"http://10.0.0.2\"\n"), [])
        XCTAssertEqual(errors("[dashboard]\nurl = \"kiosk.local:8080\"\n"), [
            #"t.toml:2: dashboard.url: must start with http:// or https:// (e.g. "http://kiosk.local:8080")"#
        ])
        XCTAssertTrue(errors("[dashboard]\nurl = \"http://kiosk.local:8080/dash\"\n").first?.contains("no path") ?? false)
        XCTAssertTrue(errors("[dashboard]\nurl = \"http://kiosk.local:0\"\n").first?.contains("1-65535") ?? false)
        XCTAssertTrue(errors("[dashboard]\nurl = \"http://:8080\"\n").first?.contains("the host is missing") ?? false)
        XCTAssertTrue(errors("[dashboard]\nurl = \"http://\"\n").first?.contains("http://") ?? false)
    }
}
