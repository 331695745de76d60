import DriveLink
import Glibc
import XCTest

final class BluetoothErrorAdviceTests: XCTestCase {
    private let address = "98:D3:31:FB:12:34"

    private func sentence(_ code: Int32) -> String {
        BluetoothErrorAdvice.sentence(for: code, address: address, channel: 1)
    }

    func testEveryMappedErrnoGivesAnActionableSentence() {
        XCTAssertTrue(sentence(EAFNOSUPPORT).contains("modprobe bluetooth rfcomm"))
        XCTAssertTrue(sentence(EPROTONOSUPPORT).contains("serial:///dev/rfcomm0 or tcp://HOST:PORT"))
        XCTAssertEqual(
            sentence(EHOSTUNREACH),
            "no Bluetooth adapter is up: check `bluetoothctl list`, `rfkill unblock bluetooth`, `bluetoothctl power on`")
        XCTAssertEqual(sentence(ENODEV), sentence(EHOSTUNREACH))
        XCTAssertTrue(sentence(ENETDOWN).contains("adapter is down"))
        XCTAssertTrue(sentence(BluetoothErrorAdvice.rfkillErrno).contains("rfkill unblock bluetooth"))
        XCTAssertEqual(sentence(EHOSTDOWN), "the car 98:D3:31:FB:12:34 does not answer: is it switched on and within range?")
        XCTAssertEqual(sentence(ETIMEDOUT), sentence(EHOSTDOWN))
        XCTAssertTrue(sentence(ECONNREFUSED).contains("no serial (SPP) service on channel 1"))
        XCTAssertTrue(sentence(ECONNREFUSED).contains("rfcomm://98:D3:31:FB:12:34/2"))
        for code in [EACCES, EPERM, ECONNRESET] {
            XCTAssertTrue(sentence(code).contains("bluetoothctl pair 98:D3:31:FB:12:34"))
            XCTAssertTrue(sentence(code).contains("1234 or 0000"))
        }
    }

    func testUnknownErrnoStillNamesTheCarAndWhatToCheck() {
        let text = sentence(EMFILE)
        XCTAssertTrue(text.contains("98:D3:31:FB:12:34"))
        XCTAssertTrue(text.contains("too many open files"))
        XCTAssertFalse(text.contains("errno"))
    }
}
