import DriveWebProtocol
import XCTest

final class CookieHeaderTests: XCTestCase {
    func testCookieParsing() {
        XCTAssertEqual(CookieHeader.value(of: "carbridge_session", in: "a=1; carbridge_session=xyz; b=2"), "xyz")
        XCTAssertEqual(CookieHeader.value(of: "carbridge_session", in: "carbridge_session=xyz"), "xyz")
        XCTAssertEqual(CookieHeader.value(of: "carbridge_session", in: "a=1;\tcarbridge_session=xyz"), "xyz")
        XCTAssertEqual(CookieHeader.value(of: "carbridge_session", in: "carbridge_session=; a=1"), "")
        XCTAssertNil(CookieHeader.value(of: "carbridge_session", in: "xcarbridge_session=xyz"))
        XCTAssertNil(CookieHeader.value(of: "carbridge_session", in: nil))
        XCTAssertNil(CookieHeader.value(of: "carbridge_session", in: "carbridge_session"))
        XCTAssertNil(CookieHeader.value(of: "carbridge_session", in: ""))
        // A Set-Cookie line reads the same way (the join route's test takes its session from one).
        XCTAssertEqual(
            CookieHeader.value(of: "carbridge_session", in: "carbridge_session=abc; Path=/; HttpOnly; SameSite=Strict"), "abc")
    }

    /// Regression: splitting the header by `Character` did not split at a `;` that a combining mark follows
    /// (one grapheme cluster), so the value ran on past it.
    func testValueEndsAtEverySemicolon() {
        let value = CookieHeader.value(of: "carbridge_session", in: "carbridge_session=abc;\u{301}other=1")
        XCTAssertEqual(value, "abc")
        XCTAssertEqual(CookieHeader.value(of: "other", in: "carbridge_session=abc;\u{301}other=1"), nil)
        XCTAssertEqual(CookieHeader.value(of: "\u{301}other", in: "carbridge_session=abc;\u{301}other=1"), "1")
    }

    /// Regression: names were compared as `String`s, so a name only canonically equal matched
    /// (U+212A KELVIN SIGN is `K`).
    func testNamesMatchByteForByte() {
        XCTAssertNil(CookieHeader.value(of: "K", in: "\u{212A}=1"))
        XCTAssertEqual(CookieHeader.value(of: "K", in: "\u{212A}=1; K=2"), "2")
    }
}
