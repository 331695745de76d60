import DriveLink
import XCTest

final class LinkNameURLTests: XCTestCase {
    func testNamesParse() throws {
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://HC-05"), .rfcommDevice(name: "HC-05", channel: nil))
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://name=HC-05"), .rfcommDevice(name: "HC-05", channel: nil))
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://NAME=HC-05/3"), .rfcommDevice(name: "HC-05", channel: 3))
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://My%20Car%2F2"), .rfcommDevice(name: "My Car/2", channel: nil))
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://name=a%3Ab"), .rfcommDevice(name: "a:b", channel: nil))
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://Caf%C3%A9"), .rfcommDevice(name: "Café", channel: nil))
        // an address stays an address, with or without name-like case
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://98:d3:31:fb:12:34"), .rfcomm(address: "98:D3:31:FB:12:34", channel: 1))
    }

    func testCanonicalSpellingRoundTrips() throws {
        for url in [LinkURL.rfcommDevice(name: "HC-05", channel: nil), .rfcommDevice(name: "My Car/2 = ok", channel: 7),
                    .rfcommDevice(name: "name=x", channel: nil), .rfcommDevice(name: "Café", channel: 1)] {
            XCTAssertEqual(try LinkURL(parsing: url.description), url, url.description)
        }
        XCTAssertEqual(LinkURL.rfcommDevice(name: "HC-05", channel: 3).description, "rfcomm://name=HC-05/3")
        XCTAssertEqual(LinkURL.rfcommDevice(name: "My Car", channel: nil).description, "rfcomm://name=My%20Car")
    }

    func testBadNames() {
        func problem(_ text: String) -> String? {
            do {
                _ = try LinkURL(parsing: text)
                return nil
            } catch {
                return error.problem
            }
        }
        XCTAssertEqual(problem("rfcomm://98:D3:31:FB:12"), "\"98:D3:31:FB:12\" is not a Bluetooth address (six hex pairs like 98:D3:31:FB:12:34)")
        XCTAssertEqual(problem("rfcomm:///3"), "\"\" is not a Bluetooth address (six hex pairs like 98:D3:31:FB:12:34)")
        XCTAssertEqual(problem("rfcomm://name="), "a device name must have 1 to 248 bytes, like rfcomm://HC-05")
        XCTAssertEqual(problem("rfcomm://HC-05/0"), "RFCOMM channel \"0\" must be a number from 1 to 30")
        XCTAssertEqual(problem("rfcomm://bad%2"), "\"bad%2\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        XCTAssertEqual(problem("rfcomm://bad%FF"), "\"bad%FF\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        XCTAssertEqual(problem("rfcomm://a%0Ab"), "\"a%0Ab\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        XCTAssertNotNil(problem("rfcomm://a/b/c"))
        XCTAssertNotNil(problem("rfcomm://name=" + String(repeating: "x", count: 249)))
    }
}
