import DriveLink
import XCTest

/// `HOST:PORT`, the one parser behind `tcp://` links and `car-sim --listen`.
final class HostPortTests: XCTestCase {
    func testParsesNamesAddressesAndBracketedIPv6() throws {
        XCTAssertEqual(try HostPort(parsing: "127.0.0.1:7000"), HostPort(host: "127.0.0.1", port: 7000))
        XCTAssertEqual(try HostPort(parsing: "car.local:1"), HostPort(host: "car.local", port: 1))
        XCTAssertEqual(try HostPort(parsing: "[::1]:0"), HostPort(host: "::1", port: 0))
        XCTAssertEqual(try HostPort(parsing: "[fe80::1%eth0]:65535"), HostPort(host: "fe80::1%eth0", port: 65535))
        XCTAssertEqual(try HostPort(parsing: "[::1]:8080").description, "[::1]:8080")
        XCTAssertEqual(try HostPort(parsing: "[localhost]:80").description, "localhost:80")
    }

    func testEachProblemHasItsOwnError() {
        func problem(_ text: String, ports: ClosedRange<Int> = 0...65535) -> HostPortError? {
            do throws(HostPortError) {
                _ = try HostPort(parsing: text, ports: ports)
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(problem("localhost"), .missingPort)
        XCTAssertEqual(problem("[::1]"), .missingPort)
        XCTAssertEqual(problem("[::1]8080"), .missingPort)
        XCTAssertEqual(problem("[::1:8080"), .missingCloseBracket)
        XCTAssertEqual(problem("::1:8080"), .unbracketedIPv6)
        XCTAssertEqual(problem(":8080"), .emptyHost)
        XCTAssertEqual(problem("[]:8080"), .emptyHost)
        XCTAssertEqual(problem("a b:1"), .invalidHost("a b"))
        XCTAssertEqual(problem("[[::1]:2"), .invalidHost("[::1"))
        XCTAssertEqual(problem("car\u{7F}:1"), .invalidHost("car\u{7F}"))
        XCTAssertEqual(problem("car:"), .invalidPort(""))
        XCTAssertEqual(problem("car:+80"), .invalidPort("+80"))
        XCTAssertEqual(problem("car:65536"), .invalidPort("65536"))
        XCTAssertEqual(problem("car:0", ports: 1...65535), .invalidPort("0"))
        XCTAssertNil(problem("car:0"))
    }
}
