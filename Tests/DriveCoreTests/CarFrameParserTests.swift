import DriveCore
import XCTest

final class CarFrameParserTests: XCTestCase {
    private func reason(_ line: String, file: StaticString = #filePath, line number: UInt = #line) -> String? {
        switch CarFrameParser.parse(line) {
        case .success(let frame):
            XCTFail("\(line) parsed as \(frame)", file: file, line: number)
            return nil
        case .failure(let error):
            XCTAssertEqual(error.line, line, file: file, line: number)
            return error.reason
        }
    }

    func testCustomerExamplesParse() throws {
        XCTAssertEqual(try CarFrameParser.parse("M,0,40,1").get(), .motion(range: 0, speed: 40, direction: 1))
        XCTAssertEqual(try CarFrameParser.parse("X,-1,30,0").get(), .motion(range: -1, speed: 30, direction: 0))
        XCTAssertEqual(try CarFrameParser.parse("R,2,180,1").get(), .motion(range: 2, speed: 180, direction: 1))
        XCTAssertEqual(try CarFrameParser.parse("G,0,0,1").get(), Frame(kind: .f2, range: 0, speed: 0, direction: 1))
        XCTAssertEqual(try CarFrameParser.parse("E,0,0,0").get(), .engineOff)
        XCTAssertEqual(try CarFrameParser.frame(from: "Y,1,240,0"), .motion(range: 1, speed: 240, direction: 0))
    }

    func testEveryEncodedValidFrameRoundTrips() throws {
        for direction in 0...1 {
            for range in -2...2 {
                for speed in stride(from: 0, through: 240, by: 10) {
                    let motion = Frame.motion(range: range, speed: speed, direction: direction)
                    XCTAssertEqual(try CarFrameParser.parse(motion.text).get(), motion)
                    let f5 = Frame(kind: .f5, range: range, speed: speed, direction: direction)
                    XCTAssertEqual(try CarFrameParser.parse(f5.text).get(), f5)
                }
            }
        }
    }

    func testShapeErrors() {
        XCTAssertEqual(reason(""), "empty line (expected T,A,S,D such as M,0,40,1)")
        XCTAssertEqual(reason("M,0,40"), "expected 4 fields T,A,S,D separated by commas, got 3")
        XCTAssertEqual(reason("M,0,40,1,"), "expected 4 fields T,A,S,D separated by commas, got 5")
        XCTAssertEqual(reason("Q,0,40,1"), "unknown command type \"Q\" (expected one of M L R B X Y F G H I J E)")
        XCTAssertEqual(reason("m,0,40,1"), "unknown command type \"m\" (expected one of M L R B X Y F G H I J E)")
        XCTAssertEqual(reason("MM,0,40,1"), "unknown command type \"MM\" (expected one of M L R B X Y F G H I J E)")
    }

    func testIntegerSpelling() {
        XCTAssertEqual(reason("R,+1,40,1"), "angle range \"+1\" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,-0,40,1"), "angle range \"-0\" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,0,040,1"), "speed \"040\" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,0, 40,1"), "speed \" 40\" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,0,,1"), "speed \"\" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,0,40,01"), "direction \"01\" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,0,40,1 "), "direction \"1 \" is not a plain integer (no '+', spaces or leading zeros)")
        XCTAssertEqual(reason("M,0,4e1,1"), "speed \"4e1\" is not a plain integer (no '+', spaces or leading zeros)")
    }

    func testRanges() {
        XCTAssertEqual(reason("R,3,40,1"), "angle range 3 is outside -2…2")
        XCTAssertEqual(reason("L,-3,40,1"), "angle range -3 is outside -2…2")
        XCTAssertEqual(reason("M,0,250,1"), "speed 250 is outside 0…240")
        XCTAssertEqual(reason("M,0,-10,1"), "speed -10 is outside 0…240")
        XCTAssertEqual(reason("M,0,45,1"), "speed 45 is not a multiple of 10")
        XCTAssertEqual(reason("F,0,45,1"), "speed 45 is not a multiple of 10")
        XCTAssertEqual(reason("M,0,40,2"), "direction 2 is neither 1 (forward) nor 0 (reverse)")
        XCTAssertEqual(reason("M,0,999999999,1"), "speed \"999999999\" is not a plain integer (no '+', spaces or leading zeros)")
    }

    func testMotionTypeMustMatchDirectionAndAngle() {
        XCTAssertEqual(reason("M,1,40,1"), "type M does not match D=1, A=1: that state is R (forward-right)")
        XCTAssertEqual(reason("M,0,40,0"), "type M does not match D=0, A=0: that state is B (back)")
        XCTAssertEqual(reason("L,1,40,1"), "type L does not match D=1, A=1: that state is R (forward-right)")
        XCTAssertEqual(reason("X,-1,30,1"), "type X does not match D=1, A=-1: that state is L (forward-left)")
        XCTAssertEqual(reason("Y,-2,30,0"), "type Y does not match D=0, A=-2: that state is X (back-left)")
        XCTAssertEqual(reason("B,2,30,0"), "type B does not match D=0, A=2: that state is Y (back-right)")
    }

    func testEngineOffMustBeExact() {
        XCTAssertEqual(reason("E,0,0,1"), "an engine-off frame must be exactly E,0,0,0")
        XCTAssertEqual(reason("E,0,10,0"), "an engine-off frame must be exactly E,0,0,0")
        XCTAssertEqual(reason("E,1,0,0"), "an engine-off frame must be exactly E,0,0,0")
    }

    func testErrorDescriptionQuotesTheLine() {
        guard case .failure(let error) = CarFrameParser.parse("M,0,45,1") else { return XCTFail("accepted") }
        XCTAssertEqual(error.description, "speed 45 is not a multiple of 10 (in \"M,0,45,1\")")
    }
}
