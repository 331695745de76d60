import DriveLink
import XCTest

final class LinkURLTests: XCTestCase {
    private func problem(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            let url = try LinkURL(parsing: text)
            XCTFail("\(text) parsed as \(url)", file: file, line: line)
            return nil
        } catch {
            XCTAssertTrue(error.description.contains("rfcomm://AA:BB:CC:DD:EE:FF[/CHANNEL]"), file: file, line: line)
            return error.problem
        }
    }

    func testGoodForms() throws {
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://98:d3:31:fb:12:34"), .rfcomm(address: "98:D3:31:FB:12:34", channel: 1))
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://98:D3:31:FB:12:34/30"), .rfcomm(address: "98:D3:31:FB:12:34", channel: 30))
        XCTAssertEqual(try LinkURL(parsing: "serial:///dev/rfcomm0"), .serial(path: "/dev/rfcomm0", baud: 9600))
        XCTAssertEqual(try LinkURL(parsing: "serial:///dev/ttyUSB0?baud=115200"), .serial(path: "/dev/ttyUSB0", baud: 115200))
        XCTAssertEqual(try LinkURL(parsing: "tcp://127.0.0.1:9000"), .tcp(host: "127.0.0.1", port: 9000))
        XCTAssertEqual(try LinkURL(parsing: "tcp://car.local:1"), .tcp(host: "car.local", port: 1))
        XCTAssertEqual(try LinkURL(parsing: "tcp://[::1]:65535"), .tcp(host: "::1", port: 65535))
        XCTAssertEqual(try LinkURL(parsing: " stdout "), .stdout)
        XCTAssertEqual(try LinkURL(parsing: "sim"), .sim)
    }

    func testCanonicalSpelling() throws {
        XCTAssertEqual(try LinkURL(parsing: "rfcomm://98:d3:31:fb:12:34").description, "rfcomm://98:D3:31:FB:12:34/1")
        XCTAssertEqual(try LinkURL(parsing: "serial:///dev/rfcomm0").description, "serial:///dev/rfcomm0?baud=9600")
        XCTAssertEqual(try LinkURL(parsing: "tcp://[::1]:80").description, "tcp://[::1]:80")
    }

    func testBadForms() {
        XCTAssertEqual(problem(""), "the link URL is empty")
        XCTAssertEqual(problem("/dev/rfcomm0"), "\"/dev/rfcomm0\" has no scheme")
        XCTAssertEqual(problem("http://x:1"), "unknown scheme \"http\"")
        XCTAssertEqual(problem("rfcomm://98:D3:31:FB:12"), "\"98:D3:31:FB:12\" is not a Bluetooth address (six hex pairs like 98:D3:31:FB:12:34)")
        XCTAssertEqual(problem("rfcomm://98:D3:31:FB:12:ZZ"), "\"98:D3:31:FB:12:ZZ\" is not a Bluetooth address (six hex pairs like 98:D3:31:FB:12:34)")
        XCTAssertEqual(problem("rfcomm://98:D3:31:FB:12:34/0"), "RFCOMM channel \"0\" must be a number from 1 to 30")
        XCTAssertEqual(problem("rfcomm://98:D3:31:FB:12:34/31"), "RFCOMM channel \"31\" must be a number from 1 to 30")
        XCTAssertEqual(problem("rfcomm://98:D3:31:FB:12:34/x"), "RFCOMM channel \"x\" must be a number from 1 to 30")
        XCTAssertEqual(problem("serial://dev/rfcomm0"), "a serial URL needs an absolute device path, like serial:///dev/rfcomm0")
        XCTAssertEqual(problem("serial:///dev/rfcomm0?baud=9601"), "baud \"9601\" is not supported (use one of 9600, 19200, 38400, 57600, 115200)")
        XCTAssertEqual(problem("serial:///dev/rfcomm0?parity=even"), "unknown serial option \"parity=even\" (only baud=N is accepted)")
        XCTAssertEqual(problem("tcp://localhost"), "a tcp URL needs a port: tcp://HOST:PORT")
        XCTAssertEqual(problem("tcp://:9000"), "a tcp URL needs a host: tcp://HOST:PORT")
        XCTAssertEqual(problem("tcp://localhost:0"), "TCP port \"0\" must be a number from 1 to 65535")
        XCTAssertEqual(problem("tcp://localhost:70000"), "TCP port \"70000\" must be a number from 1 to 65535")
        XCTAssertEqual(problem("tcp://::1:80"), "write an IPv6 address in brackets: tcp://[::1]:PORT")
    }

    func testErrorSentenceNamesTheURLAndTheAcceptedForms() {
        do {
            _ = try LinkURL(parsing: "tcp://x:0")
            XCTFail("accepted")
        } catch {
            XCTAssertEqual(
                error.description,
                "invalid link \"tcp://x:0\": TCP port \"0\" must be a number from 1 to 65535; use "
                    + "rfcomm://AA:BB:CC:DD:EE:FF[/CHANNEL], rfcomm://NAME[/CHANNEL], ble://AA:BB:CC:DD:EE:FF, ble://NAME, "
                    + "serial:///dev/rfcomm0[?baud=9600], tcp://HOST:PORT, stdout or sim")
        }
    }

    func testBLEByAddressIsUpperCased() throws {
        XCTAssertEqual(try LinkURL(parsing: "ble://c8:fd:19:12:34:56"), .ble(address: "C8:FD:19:12:34:56"))
        XCTAssertEqual(try LinkURL(parsing: "BLE://C8:FD:19:12:34:56/"), .ble(address: "C8:FD:19:12:34:56"))
        XCTAssertEqual(try LinkURL(parsing: "ble://c8:fd:19:12:34:56").description, "ble://C8:FD:19:12:34:56")
    }

    func testBLEByName() throws {
        XCTAssertEqual(try LinkURL(parsing: "ble://HMSoft"), .bleDevice(name: "HMSoft"))
        XCTAssertEqual(try LinkURL(parsing: "ble://name=HMSoft"), .bleDevice(name: "HMSoft"))
        // %XX escapes, in a bare name and after name=; a name that looks like an address only with name=.
        XCTAssertEqual(try LinkURL(parsing: "ble://Red%20car"), .bleDevice(name: "Red car"))
        XCTAssertEqual(try LinkURL(parsing: "ble://name=BT%2F05%C3%A9"), .bleDevice(name: "BT/05é"))
        XCTAssertEqual(try LinkURL(parsing: "ble://name=C8%3AFD"), .bleDevice(name: "C8:FD"))
        XCTAssertEqual(try LinkURL(parsing: "ble://Red%20car").description, "ble://name=Red%20car")
    }

    func testBadBLEForms() {
        XCTAssertEqual(problem("ble://AA:BB"), "\"AA:BB\" is not a Bluetooth address (six hex pairs like C8:FD:19:12:34:56)")
        XCTAssertEqual(problem("ble://C8:FD:19:12:34:ZZ"), "\"C8:FD:19:12:34:ZZ\" is not a Bluetooth address (six hex pairs like C8:FD:19:12:34:56)")
        XCTAssertEqual(problem("ble://"), "\"\" is not a Bluetooth address (six hex pairs like C8:FD:19:12:34:56)")
        let noChannel = "a ble URL is ble://ADDRESS or ble://NAME, with no channel (write a '/' in a name as %2F)"
        XCTAssertEqual(problem("ble://X/1"), noChannel)
        XCTAssertEqual(problem("ble://C8:FD:19:12:34:56/1"), noChannel)
        XCTAssertEqual(problem("ble://name=HM%2"), "\"HM%2\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        XCTAssertEqual(problem("ble://name=HM%0A"), "\"HM%0A\" is not a device name (a bad %XX escape, not UTF-8, or a control character)")
        XCTAssertEqual(problem("ble://name="), "a device name must have 1 to 248 bytes, like ble://HMSoft")
        XCTAssertEqual(problem("ble://" + String(repeating: "x", count: 249)), "a device name must have 1 to 248 bytes, like ble://HMSoft")
    }

    /// Every ble:// URL's canonical spelling parses back to the same link.
    func testBLEDescriptionRoundTrips() throws {
        for text in ["ble://c8:fd:19:12:34:56", "ble://HMSoft", "ble://name=HMSoft", "ble://Red%20car", "ble://name=C8%3AFD",
                     "ble://name=name%3Dx", "ble://name=BT%2F05%C3%A9", "ble://" + String(repeating: "y", count: 248)] {
            let url = try LinkURL(parsing: text)
            XCTAssertEqual(try LinkURL(parsing: url.description), url, text)
        }
        // A name that spells an address is still a name after the round trip.
        let lookalike = LinkURL.bleDevice(name: "C8:FD:19:12:34:56")
        XCTAssertEqual(try LinkURL(parsing: lookalike.description), lookalike)
        XCTAssertEqual(try LinkURL(parsing: "ble://" + LinkURL.encodeDeviceName("C8:FD:19:12:34:56")), lookalike)
    }

    /// Regression (found by FuzzLinkURL): `tcp://[[8\u{1A}1]:2` was accepted with the host `[8\u{1A}1`, whose
    /// canonical spelling `tcp://[8\u{1A}1:2` the parser then rejected. Brackets and control characters are
    /// not part of a host; every accepted URL's canonical spelling parses back to the same link.
    func testHostsWithBracketsOrControlCharactersAreRejected() throws {
        for text in ["tcp://[[8\u{1A}1]:2", "tcp://[[::1]:2", "tcp://a]b:1", "tcp://a[b:1", "tcp://a\u{1A}b:1", "tcp://a\tb:1",
                     "tcp://[a\nb]:1", "tcp://car\u{7F}:1"] {
            XCTAssertTrue(problem(text)?.contains("is not a host name") ?? false, text.debugDescription)
        }
        XCTAssertEqual(problem("serial:///dev/tty\u{0}USB0"), "the serial device path contains a control character")
        for text in ["tcp://[::1]:80", "tcp://[fe80::1%eth0]:7000", "tcp://[localhost]:1", "tcp://car.local:7000/",
                     "serial:///dev/rfcomm0", "rfcomm://98:d3:31:fb:12:34/5", "stdout://", "sim"] {
            let url = try LinkURL(parsing: text)
            XCTAssertEqual(try LinkURL(parsing: url.description), url, text)
        }
    }
}
