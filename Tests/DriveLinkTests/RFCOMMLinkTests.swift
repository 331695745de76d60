import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

final class RFCOMMLinkTests: XCTestCase {
    func testThisKernelsErrorBecomesAClearSentenceAndTheLinkRetries() throws {
        let loop = try EventLoop()
        let address = "98:D3:31:FB:12:34"
        let link = RFCOMMLink(connector: RFCOMMConnector(address: address, channel: 1), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        XCTAssertTrue(try spin(loop, timeout: .seconds(3)) { recorder.downReasons.count >= 2 })
        XCTAssertGreaterThanOrEqual(link.connectAttempts, 2)
        XCTAssertEqual(link.lastRetryDelay, .seconds(1))
        let reason = try XCTUnwrap(recorder.downReasons.first)
        XCTAssertFalse(reason.contains("errno"))

        // What does socket(AF_BLUETOOTH) do here? Without Bluetooth it is EAFNOSUPPORT.
        let probe = socket(AF_BLUETOOTH, SocketSupport.streamSocketType, 3)
        let probeErrno = errno
        if probe < 0 {
            XCTAssertEqual(reason, BluetoothErrorAdvice.sentence(for: probeErrno, address: address, channel: 1))
            if probeErrno == EAFNOSUPPORT { XCTAssertTrue(reason.contains("modprobe bluetooth rfcomm")) }
        } else {
            Glibc.close(probe)  // a kernel with Bluetooth: some other sentence about the adapter or the car
            XCTAssertTrue(reason.contains(address) || reason.contains("adapter") || reason.contains("Bluetooth"))
        }
        link.send(.engineOff)  // dropped, no crash
        XCTAssertEqual(link.transport.pendingFrames, [])
    }

    func testName() {
        let connector = RFCOMMConnector(address: "98:D3:31:FB:12:34", channel: 3)
        XCTAssertEqual(connector.name, "rfcomm://98:D3:31:FB:12:34/3")
    }
}
