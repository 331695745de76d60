import DriveCore
import DriveWebProtocol
import XCTest

final class ClientMessageTests: XCTestCase {
    private func parse(_ text: String) -> ClientMessage? { try? ClientMessage.parse(text) }

    private func reason(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let message = try ClientMessage.parse(text)
            XCTFail("accepted \(text) as \(message)", file: file, line: line)
            return ""
        } catch {
            return error.reason
        }
    }

    func testEveryControl() {
        XCTAssertEqual(parse(#"{"c":"engine"}"#), .control(.engine))
        XCTAssertEqual(parse(#"{"c":"speed_up"}"#), .control(.speedUp))
        XCTAssertEqual(parse(#"{"c":"speed_down"}"#), .control(.speedDown))
        XCTAssertEqual(parse(#"{"c":"gear"}"#), .control(.gear))
        for n in 1...5 { XCTAssertEqual(parse(#"{"c":"f","n":\#(n)}"#), .control(.function(n))) }
        XCTAssertEqual(parse(#"{"c":"steer","deg":-35.5}"#), .control(.steer(-35.5)))
        XCTAssertEqual(parse(#" { "deg" : 90 , "c" : "steer" } "#), .control(.steer(90)))
        XCTAssertEqual(parse(#"{"c":"ping"}"#), .ping)
    }

    func testMalformedMessagesAreRejectedWithAReason() {
        XCTAssertTrue(reason("engine").contains("not a flat JSON object"))
        XCTAssertTrue(reason("").contains("not a flat JSON object"))
        XCTAssertTrue(reason(#"{"c":"engine""#).contains("unterminated"))
        XCTAssertTrue(reason(#"{"c":"engine"} x"#).contains("trailing"))
        XCTAssertTrue(reason(#"{"c":{"x":1}}"#).contains("nested"))
        XCTAssertTrue(reason(#"{"c":["engine"]}"#).contains("nested"))
        XCTAssertTrue(reason(#"{"c":true}"#).contains("strings or numbers"))
        XCTAssertTrue(reason(#"{"c":"engine","c":"gear"}"#).contains("twice"))
        XCTAssertTrue(reason(#"{"n":3}"#).contains("missing \"c\""))
        XCTAssertTrue(reason(#"{"c":"launch"}"#).contains("unknown control"))
        XCTAssertTrue(reason(#"{"c":"engine","speed":240}"#).contains("unexpected key \"speed\""))
        XCTAssertTrue(reason(#"{"c":"f","n":6}"#).contains("1…5"))
        XCTAssertTrue(reason(#"{"c":"f","n":2.5}"#).contains("1…5"))
        XCTAssertTrue(reason(#"{"c":"f"}"#).contains("needs \"n\""))
        XCTAssertTrue(reason(#"{"c":"f","n":"3"}"#).contains("finite number"))
        XCTAssertTrue(reason(#"{"c":"steer","deg":91}"#).contains("−90…90"))
        XCTAssertTrue(reason(#"{"c":"steer","deg":1e999}"#).contains("finite number"))
        XCTAssertTrue(reason(#"{"c":"steer","deg":--1}"#).contains("bad number"))
        XCTAssertTrue(reason("{\"c\":\"en\ngine\"}").contains("control character"))
    }

    func testOversizedMessagesAreRejectedBeforeParsing() {
        let padding = String(repeating: " ", count: ClientMessage.maximumBytes)
        let text = #"{"c":"engine"}"# + padding
        XCTAssertEqual(reason(text), "message too long (\(text.utf8.count) bytes; at most \(ClientMessage.maximumBytes))")
        // At the limit it is still parsed.
        let atLimit = #"{"c":"engine"}"# + String(repeating: " ", count: ClientMessage.maximumBytes - 14)
        XCTAssertEqual(atLimit.utf8.count, ClientMessage.maximumBytes)
        XCTAssertEqual(parse(atLimit), .control(.engine))
    }

    func testNothingButDriverControlsCanBeNamed() {
        // Safety events are the server's own: a browser cannot send them.
        for name in ["inputLost", "input_lost", "linkUp", "shutdown", "suspend", "setSpeed", "deadman", "inputRestored"] {
            XCTAssertTrue(reason(#"{"c":"\#(name)"}"#).contains("unknown control"), name)
        }
    }

    func testBluetoothSearchAndPick() {
        XCTAssertEqual(parse(#"{"c":"bt_scan"}"#), .bluetoothScan)
        XCTAssertEqual(parse(#"{"c":"bt_pick","addr":"98:D3:31:F5:2A:11"}"#), .bluetoothPick(address: "98:D3:31:F5:2A:11"))
        XCTAssertEqual(parse(#"{"addr":"98:d3:31:f5:2a:1b","c":"bt_pick"}"#), .bluetoothPick(address: "98:D3:31:F5:2A:1B"))
        XCTAssertTrue(reason(#"{"c":"bt_scan","seconds":60}"#).contains("unexpected key \"seconds\""))
        XCTAssertTrue(reason(#"{"c":"bt_pick"}"#).contains("needs \"addr\""))
        XCTAssertTrue(reason(#"{"c":"bt_pick","addr":"98:D3:31:F5:2A:11","name":"HC-05"}"#).contains("unexpected key \"name\""))
        for bad in [
            #""98:D3:31:F5:2A""#, #""98:D3:31:F5:2A:11:00""#, #""98-D3-31-F5-2A-11""#, #""98:D3:31:F5:2A:1G""#,
            #""98:D3:31:F5:2A:1""#, #""HC-05""#, #""""#, #"" 98:D3:31:F5:2A:11""#, "981331",
        ] {
            let text = #"{"c":"bt_pick","addr":\#(bad)}"#
            XCTAssertTrue(reason(text).contains("Bluetooth address"), text)
        }
        XCTAssertNil(ClientMessage.bluetoothAddress("98:D3:31:F5:2A:11\n"))
        XCTAssertEqual(ClientMessage.bluetoothAddress("aa:bb:cc:dd:ee:ff"), "AA:BB:CC:DD:EE:FF")
    }

    func testTiltAndStickMessagesParseStrictly() throws {
        XCTAssertEqual(
            try ClientMessage.parse(#"{"c":"tilt","beta":12.5,"gamma":-30,"angle":90,"hold":"wheel","seq":812}"#),
            .tilt(PhoneTiltReading(beta: 12.5, gamma: -30, screenAngle: 90, hold: .wheel, sequence: 812)))
        XCTAssertEqual(
            try ClientMessage.parse(#"{"c":"stick","x":0.25,"y":-1,"form":"xy"}"#),
            .stick(PhoneStickReading(x: 0.25, y: -1, form: .xy)))
        XCTAssertEqual(try ClientMessage.parse(#"{"c":"straight"}"#), .straight)
        XCTAssertEqual(try ClientMessage.parse(#"{"c":"release"}"#), .release)
        let bad = [
            #"{"c":"tilt","beta":12,"gamma":-30,"angle":45,"hold":"wheel","seq":1}"#: "angle",
            #"{"c":"tilt","beta":12,"gamma":91,"angle":0,"hold":"flat","seq":1}"#: "gamma",
            #"{"c":"tilt","beta":181,"gamma":0,"angle":0,"hold":"flat","seq":1}"#: "beta",
            #"{"c":"tilt","beta":1e999,"gamma":0,"angle":0,"hold":"flat","seq":1}"#: "finite",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"hold":"upside","seq":1}"#: "hold",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"seq":1}"#: "hold",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"hold":"flat","alpha":3}"#: "alpha",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"hold":"flat"}"#: "needs \"seq\"",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"hold":"flat","seq":-1}"#: "sensor events",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"hold":"flat","seq":2.5}"#: "whole number",
            #"{"c":"tilt","beta":0,"gamma":0,"angle":0,"hold":"flat","seq":9007199254740992}"#: "whole number",
            #"{"c":"stick","x":1.5,"y":0,"form":"polar"}"#: "\"x\"",
            #"{"c":"stick","x":0,"y":-1.01,"form":"polar"}"#: "\"y\"",
            #"{"c":"stick","x":0,"y":0,"form":"round"}"#: "form",
            #"{"c":"stick","x":"0","y":0,"form":"xy"}"#: "finite",
            #"{"c":"straight","deg":3}"#: "deg",
            #"{"c":"release","now":1}"#: "now",
        ]
        for (text, word) in bad {
            XCTAssertThrowsError(try ClientMessage.parse(text), text) { error in
                XCTAssertTrue((error as? ClientMessage.Rejection)?.reason.contains(word) ?? false, "\(text): \(error)")
            }
        }
        let longest = #"{"c":"tilt","beta":-179.99999999999997,"gamma":-89.99999999999999,"angle":270,"hold":"wheel","seq":9007199254740991}"#
        XCTAssertLessThanOrEqual(longest.utf8.count, ClientMessage.maximumBytes)
        XCTAssertNoThrow(try ClientMessage.parse(longest))
    }
}
