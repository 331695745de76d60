import DriveLink
import DriveRuntime
import DriveSystem
import XCTest

final class LinkFactoryNameTests: XCTestCase {
    /// `rfcomm://NAME` is resolved through bluetoothd before the link exists: without one (this
    /// machine has no system bus, or no bluetoothd, or no such car) the factory throws one sentence
    /// and makes no link; nothing is noticed as found.
    func testANameLinkWithoutSuchACarThrowsOneSentence() throws {
        let loop = try EventLoop()
        var notices: [String] = []
        let factory = LinkFactory(notice: { notices.append($0) })
        XCTAssertThrowsError(try factory.make(url: LinkURL(parsing: "rfcomm://NoSuchCar-7f3a"), loop: loop)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("bluetoothd") || text.contains("no Bluetooth device named \"NoSuchCar-7f3a\""), text)
            XCTAssertFalse(text.contains("\n"), text)
        }
        XCTAssertTrue(notices.allSatisfy { !$0.contains("is on RFCOMM channel") }, "\(notices)")
    }
}
