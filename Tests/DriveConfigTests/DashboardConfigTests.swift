import DriveConfig
import XCTest

/// `[dashboard]` in the config file, and its one rule: controls on a non-loopback address need a token.
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
        XCTAssertEqual(errors("[dashboard]\nlisten = \"0.0.0.0:8080\"\ncontrols = true\ntoken = \"0123456789abcdef\"\n"), [])
    }

    func testTiltRate() throws {
        XCTAssertEqual(try load("").dashboard.tiltHz, 20)
        XCTAssertEqual(try load("[dashboard]\ntilt_hz = 40\n").dashboard.tiltHz, 40)
        XCTAssertEqual(errors("[dashboard]\ntilt_hz = 41\n").count, 1, "above the tab's message limit")
        XCTAssertEqual(errors("[dashboard]\ntilt_hz = 4\n").count, 1)
    }

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
