import DriveBluetooth
import DriveDBus
import XCTest

final class PairingAgentTests: XCTestCase {
    let car = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    let other = "/org/bluez/hci1/dev_00_AA_01_00_00_01"

    func testLegacyPINForTheCarOnly() {
        let agent = PairingAgent(pin: "1234", devicePath: car)
        let (reply, event) = agent.answer(member: "RequestPinCode", arguments: [.objectPath(car)])
        XCTAssertEqual(reply, .values([.string("1234")]))
        XCTAssertEqual(event, .gavePIN("1234"))
        let (refused, why) = agent.answer(member: "RequestPinCode", arguments: [.objectPath(other)])
        guard case .error(let error) = refused else { return XCTFail("answered for another device") }
        XCTAssertEqual(error.name, "org.bluez.Error.Rejected")
        XCTAssertEqual(why, .rejected("RequestPinCode(\(other))"))
    }

    func testSecureSimplePairingIsConfirmedAndPasskeyIsThePIN() {
        let agent = PairingAgent(pin: "0000", devicePath: car)
        XCTAssertEqual(agent.answer(member: "RequestConfirmation", arguments: [.objectPath(car), .uint32(123456)]).0, .values([]))
        XCTAssertEqual(agent.answer(member: "RequestConfirmation", arguments: [.objectPath(car), .uint32(123456)]).1, .confirmed(123456))
        XCTAssertEqual(agent.answer(member: "RequestPasskey", arguments: [.objectPath(car)]).0, .values([.uint32(0)]))
        let letters = PairingAgent(pin: "abcd", devicePath: car)
        guard case .error = letters.answer(member: "RequestPasskey", arguments: [.objectPath(car)]).0 else {
            return XCTFail("a non-numeric PIN is no passkey")
        }
        XCTAssertEqual(agent.answer(member: "AuthorizeService", arguments: [.objectPath(car), .string("0000110-x")]).0, .values([]))
        XCTAssertEqual(agent.answer(member: "Cancel", arguments: []).1, .cancelled)
        XCTAssertEqual(agent.answer(member: "Release", arguments: []).0, .values([]))
        XCTAssertEqual(agent.answer(member: "Frobnicate", arguments: []).0, .unknownMethod)
    }

    /// An LE module with a static passkey (HM-10 `AT+TYPE3`: 000000 by default) asks `RequestPasskey`: the PIN,
    /// six digits at most, as a number; only for the device being paired.
    func testLEPasskeyIsThePINAsANumber() {
        let hm10 = PairingAgent(pin: "000000", devicePath: car)
        XCTAssertEqual(hm10.answer(member: "RequestPasskey", arguments: [.objectPath(car)]).0, .values([.uint32(0)]))
        XCTAssertEqual(hm10.answer(member: "RequestPasskey", arguments: [.objectPath(car)]).1, .gavePasskey(0))
        let six = PairingAgent(pin: "123456", devicePath: car)
        XCTAssertEqual(six.answer(member: "RequestPasskey", arguments: [.objectPath(car)]).0, .values([.uint32(123_456)]))
        let seven = PairingAgent(pin: "1234567", devicePath: car)
        let (tooLong, event) = seven.answer(member: "RequestPasskey", arguments: [.objectPath(car)])
        guard case .error(let error) = tooLong else { return XCTFail("a seven-digit PIN is no passkey") }
        XCTAssertEqual(error.name, "org.bluez.Error.Rejected")
        XCTAssertEqual(error.message, "the PIN 1234567 is not a passkey (at most six digits)")
        XCTAssertEqual(event, .rejected("RequestPasskey(\(car))"))
        guard case .error = six.answer(member: "RequestPasskey", arguments: [.objectPath(other)]).0 else {
            return XCTFail("answered a passkey for another device")
        }
        // The car shows a passkey to type on it: reported, nothing to answer.
        XCTAssertEqual(six.answer(member: "DisplayPasskey", arguments: [.objectPath(car), .uint32(42), .uint16(0)]).1, .displayed("42"))
    }

    func testServiceMissing() {
        XCTAssertTrue(DBusError(name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "").meansServiceMissing)
        XCTAssertTrue(DBusError(name: "org.freedesktop.DBus.Error.Spawn.ChildExited", message: "Launch helper exited").meansServiceMissing)
        XCTAssertFalse(DBusError(name: "org.bluez.Error.Failed", message: "").meansServiceMissing)
    }

    func testFailureSentences() {
        func sentence(_ name: String, _ message: String = "") -> String {
            PairingFailure.sentence(DBusError(name: name, message: message), device: "HC-05 (00:AA:01:01:00:01)", pin: "0000")
        }
        XCTAssertEqual(sentence("org.bluez.Error.AuthenticationFailed", "Authentication Failed"),
                       "pairing with HC-05 (00:AA:01:01:00:01) failed: wrong PIN (the car did not accept 0000); HC-05 modules use 1234 or 0000: try --pin 1234")
        XCTAssertTrue(sentence("org.bluez.Error.ConnectionAttemptFailed", "Page Timeout").contains("not in range"))
        XCTAssertTrue(sentence("org.bluez.Error.AuthenticationRejected").contains("rejected"))
        XCTAssertTrue(sentence("org.bluez.Error.Failed", "Host is down").contains("not in range"))
    }
}
