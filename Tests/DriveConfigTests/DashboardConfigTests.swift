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
