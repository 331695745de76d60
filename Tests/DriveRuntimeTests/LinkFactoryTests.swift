import CarSim
import DriveLink
import DriveRuntime
import DriveSystem
import XCTest

final class LinkFactoryTests: XCTestCase {
    func testFactoryMakesTheRightLinks() throws {
        let loop = try EventLoop()
        XCTAssertTrue(try LinkFactory().make(url: "stdout", loop: loop) is StdoutLink)
        XCTAssertTrue(try LinkFactory().make(url: "tcp://127.0.0.1:9", loop: loop) is TCPLink)
        XCTAssertTrue(try LinkFactory().make(url: "serial:///dev/ttyS0", loop: loop) is SerialLink)
        XCTAssertTrue(try LinkFactory().make(url: "rfcomm://98:D3:31:FB:12:34/2", loop: loop) is RFCOMMLink)
        let simulated = LinkFactory(simulatedCar: { SimulatedCarLink(simulatedOn: $0, encoder: $1) })
        XCTAssertTrue(try simulated.make(url: "sim", loop: loop) is SimulatedCarLink)
        XCTAssertThrowsError(try LinkFactory().make(url: "sim", loop: loop), "a program without a simulated car") { error in
            XCTAssertEqual("\(error)", "link \"sim\": this program has no simulated car")
        }
        XCTAssertThrowsError(try LinkFactory().make(url: "bluetooth", loop: loop)) { error in
            XCTAssertTrue(error is LinkURLError)
        }
    }
}
