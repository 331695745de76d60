import DriveWebProtocol
import XCTest

final class URLEncodedFormTests: XCTestCase {
    func testLoginFormParsing() {
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token=ab%2Bc+d&x=1"), "ab+c d")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "x=1&token=second"), "second")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token=first&token=second"), "first", "the first pair wins")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token"), "", "a pair without = has an empty value")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "to%6Ben=x"), "x", "the name is decoded too")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token=a=b"), "a=b")
        XCTAssertNil(URLEncodedForm.value(of: "token", inForm: "x=1"))
        XCTAssertNil(URLEncodedForm.value(of: "token", inForm: ""))
        XCTAssertNil(URLEncodedForm.value(of: "token", inForm: "tokens=1&&xtoken=2"))
    }

    func testJoinAndTokenQueries() {
        XCTAssertEqual(URLEncodedForm.value(of: "code", inQuery: "/join?code=Ab-_9xYz0123abcd"), "Ab-_9xYz0123abcd")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inQuery: "/?token=0123456789abcdef"), "0123456789abcdef")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inQuery: "/?x=1&token=a%2Bb%20c"), "a+b c")
        // A token typed by hand keeps its `+` (Hummingbird's query parameters did too): only a form's is a space.
        XCTAssertEqual(URLEncodedForm.value(of: "token", inQuery: "/?token=ab+cd/ef=="), "ab+cd/ef==")
        XCTAssertEqual(URLEncodedForm.value(of: "code", inQuery: "/join?code=abc#code=def"), "abc", "the fragment is not the query")
        XCTAssertEqual(URLEncodedForm.value(of: "code", inQuery: "/join?a=b?code=c&code=d"), "d", "only the first ? starts the query")
        XCTAssertEqual(URLEncodedForm.value(of: "code", inQuery: "/join?code"), "")
        XCTAssertNil(URLEncodedForm.value(of: "code", inQuery: "/join"))
        XCTAssertNil(URLEncodedForm.value(of: "code", inQuery: "/join#?code=abc"))
        XCTAssertNil(URLEncodedForm.value(of: "code", inQuery: "code=abc"), "no ?: a path, not a query")
    }

    /// Regression: a `%` without two hex digits after it swallowed the two bytes after it (`%zz` → `%`,
    /// `%4` at the end → `%`), and `UInt8(_:radix:)` took a sign as a digit (`%+5` → byte 5).
    func testMalformedPercentEscapesStayAsTheyAre() {
        XCTAssertEqual(URLEncodedForm.percentDecoded("%zz"), "%zz")
        XCTAssertEqual(URLEncodedForm.percentDecoded("a%4"), "a%4")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%"), "%")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%+5x"), "% 5x")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%-0"), "%-0")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%%41"), "%A")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%4a%4A"), "JJ")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%C3%A9"), "é")
        XCTAssertEqual(URLEncodedForm.percentDecoded("%FF"), "\u{FFFD}", "not UTF-8: the replacement character")
        XCTAssertEqual(URLEncodedForm.percentDecoded("a+b%2B", plusIsSpace: false), "a+b+")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token=%zzabc"), "%zzabc")
    }

    /// Regression: splitting the `String` by `Character` did not split at a `&` or `=` that a combining mark
    /// follows (one grapheme cluster), so `token=a&\u{301}token=b` had one pair.
    func testSeparatorsFollowedByACombiningMarkStillSeparate() {
        XCTAssertEqual(URLEncodedForm.value(of: "x", inForm: "token=a&x=\u{301}"), "\u{301}")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token=a&\u{301}b"), "a")
        XCTAssertEqual(URLEncodedForm.value(of: "token", inForm: "token=\u{301}a"), "\u{301}a")
        XCTAssertEqual(URLEncodedForm.value(of: "code", inQuery: "/join?code=a&\u{301}=b"), "a")
    }
}
