import DriveTerminal
import XCTest

final class TerminalKeyDecoderTests: XCTestCase {
    private func keys(_ bytes: [UInt8]) -> [TerminalKey] {
        var decoder = TerminalKeyDecoder()
        return decoder.decode(bytes)
    }

    private let esc: UInt8 = 0x1B
    private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testArrowsAndPlainKeys() {
        XCTAssertEqual(keys([esc] + ascii("[A") + [esc] + ascii("[B") + [esc] + ascii("OC") + [esc] + ascii("[D")),
                       [.up, .down, .right, .left])
        XCTAssertEqual(keys(ascii("eG+-3q")), [.character("e"), .character("g"), .character("+"), .character("-"),
                                              .character("3"), .character("q")])
        XCTAssertEqual(keys([0x03, 0x04]), [.interrupt, .interrupt])
        XCTAssertEqual(keys([esc] + ascii("[1;5C") + [esc] + ascii("[1;2A")), [.right, .up], "modified arrows")
    }

    func testWholeUnknownSequencesAreDroppedAndTheNextKeyKept() {
        XCTAssertEqual(keys([esc] + ascii("[2~e")), [.character("e")], "Insert")
        XCTAssertEqual(keys([esc] + ascii("[15~+")), [.character("+")], "F5")
        XCTAssertEqual(keys([esc] + ascii("[H-")), [.character("-")], "Home")
        XCTAssertEqual(keys([esc] + ascii("OP1")), [.character("1")], "F1 (SS3)")
        XCTAssertEqual(keys([esc] + ascii("[[Ae")), [.character("e")], "Linux console F1")
        XCTAssertEqual(keys([esc] + ascii("[2$g")), [.character("g")], "rxvt shift-Insert")
        XCTAssertEqual(keys([esc] + ascii("[97;5ue")), [.character("e")], "kitty CSI u")
    }

    /// Regression: a stray `ESC [` used to swallow `+`, `-`, digits and then the next letter
    /// (`1b 5b 2b 65` gave nothing).
    func testAStrayIntroducerNeverEatsTheDriversKeys() {
        XCTAssertEqual(keys([0x1B, 0x5B, 0x2B, 0x65]), [.character("+"), .character("e")])
        XCTAssertEqual(keys([esc] + ascii("[-")), [.character("-")])
        XCTAssertEqual(keys([esc] + ascii("[e")), [.character("e")], "a lower-case final right after ESC [ is a key")
        XCTAssertEqual(keys([esc] + ascii("[g c q")), [.character("g"), .character(" "), .character("c"),
                                                      .character(" "), .character("q")])
        XCTAssertEqual(keys([esc] + ascii("[12+e")), [.character("1"), .character("2"), .character("+"), .character("e")],
                       "parameters followed by an intermediate: the introducer alone is dropped")
        XCTAssertEqual(keys([esc] + ascii("[1") + [esc] + ascii("[Ae")), [.character("1"), .up, .character("e")],
                       "an ESC aborts the sequence in progress and starts a new one")
        XCTAssertEqual(keys([esc] + ascii("[1") + [0x03]), [.character("1"), .interrupt], "Ctrl-C is never eaten")
        XCTAssertEqual(keys([esc] + ascii("O+")), [.character("+")])
        XCTAssertEqual(keys([esc] + ascii("Ok") + [esc] + ascii("Om") + [esc] + ascii("Oq")),
                       [.character("+"), .character("-"), .character("1")], "application keypad")
        let many = String(repeating: "1", count: TerminalKeyDecoder.maximumParameterBytes + 4)
        XCTAssertEqual(keys([esc, 0x5B] + ascii(many)), Array(repeating: TerminalKey.character("1"), count: many.count),
                       "an over-long parameter run aborts: at most the introducer is lost")
    }

    func testIncompleteSequencesWaitForTheNextRead() {
        var decoder = TerminalKeyDecoder()
        XCTAssertEqual(decoder.decode([esc]), [])
        XCTAssertEqual(decoder.decode(ascii("[")), [])
        XCTAssertEqual(decoder.decode(ascii("1;5")), [])
        XCTAssertEqual(decoder.pendingByteCount, 5)
        XCTAssertEqual(decoder.decode(ascii("De")), [.left, .character("e")])
        XCTAssertEqual(decoder.pendingByteCount, 0)
        // A stray ESC [ left pending, then a key typed later: the key comes through.
        XCTAssertEqual(decoder.decode([esc] + ascii("[")), [])
        XCTAssertEqual(decoder.decode(ascii("+")), [.character("+")])
        XCTAssertEqual(decoder.decode([esc] + ascii("[")), [])
        XCTAssertEqual(decoder.decode(ascii("e")), [.character("e")])
    }
}
