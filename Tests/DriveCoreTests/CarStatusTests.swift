import DriveCore
import XCTest

/// The car's status lines (docs/protocol.md §7): the grammar, the bounded table, the low-battery rule
/// and its alarm with the re-arm margin, on exact values and instants.
final class CarStatusTests: XCTestCase {
    private let t0 = Instant(nanoseconds: 5_000_000_000)

    private func pairs(_ text: String) -> [String]? {
        CarStatusLine(text)?.pairs.map { "\($0.key)=\($0.value)" }
    }

    func testStatusLinesParse() {
        XCTAssertEqual(pairs("BAT=7.42"), ["BAT=7.42"])
        XCTAssertEqual(pairs("BAT=7.40;RSSI=-61"), ["BAT=7.40", "RSSI=-61"])
        XCTAssertEqual(pairs("mode=line follow;x_2=ok"), ["mode=line follow", "x_2=ok"], "spaces inside a value")
        XCTAssertEqual(pairs("A=a=b"), ["A=a=b"], "the first = splits")
        let line = CarStatusLine("BAT=7.42;T=-3;P=95;M=fast;E=1e3;N=nan;I=inf;H=0x10;D=1.2.3;S=+2;Z=.5")!
        XCTAssertEqual(line.pairs.map(\.number), [7.42, -3, 95, nil, nil, nil, nil, nil, nil, 2, 0.5])
    }

    func testOtherLinesStayPlain() {
        for text in [
            "", "OK car ready failsafe=300", "BAT,80", "CAR failsafe stop", "ERR bad frame", "E,0,0,0",
            "BAT 7.4V", "BAT=", "=7", "BAT=7;", ";BAT=7", "BAT=7;;T=1", "1BAT=7", "_X=1", "BA-T=7", "BAT =7",
            "BAT=7\u{7F}", "BAT=7\t", "BAT=7é", "K=v;oops",
        ] {
            XCTAssertNil(CarStatusLine(text), "\"\(text)\" is not a status line")
        }
    }

    func testTheLimits() {
        let key16 = String(repeating: "K", count: 16)
        let value32 = String(repeating: "v", count: 32)
        XCTAssertNotNil(CarStatusLine("\(key16)=\(value32)"))
        XCTAssertNil(CarStatusLine("\(key16)K=1"), "a 17-character key")
        XCTAssertNil(CarStatusLine("K=\(value32)v"), "a 33-character value")
        let sixteen = (0..<16).map { "K\($0)=\(value32)" }.joined(separator: ";")
        XCTAssertEqual(CarStatusLine(sixteen)?.pairs.count, 16)
        XCTAssertNil(CarStatusLine(sixteen + ";Z=1"), "17 pairs")
        let longest = (0..<16).map { "\(String(repeating: "K", count: 13))\($0 + 100)=\(value32)" }.joined(separator: ";")
        XCTAssertEqual(CarStatusLine(longest)?.pairs.count, 16, "sixteen pairs at their longest")
    }

    func testTheTableKeepsTheLastValueOfEachKey() {
        var table = CarStatusTable()
        table.update(CarStatusLine("BAT=7.40;RSSI=-61")!, at: t0)
        table.update(CarStatusLine("BAT=7.38;MODE=auto")!, at: t0.advanced(by: .seconds(2)))
        XCTAssertEqual(table.entries.map(\.key), ["BAT", "RSSI", "MODE"], "in the order the keys first came")
        XCTAssertEqual(table["BAT"]?.value, "7.38")
        XCTAssertEqual(table["BAT"]?.number, 7.38)
        XCTAssertEqual(table["BAT"]?.time, t0.advanced(by: .seconds(2)))
        XCTAssertEqual(table["RSSI"]?.time, t0)
        XCTAssertNil(table["MODE"]?.number)
        XCTAssertEqual(table.summary, "BAT=7.38  RSSI=-61  MODE=auto")
    }

    func testTheTableIsBoundedAndTheKeyHeardFromLongestAgoGoes() {
        var table = CarStatusTable()
        table.update(CarStatusLine("BAT=7")!, at: t0)
        for n in 0..<31 { table.update(CarStatusLine("K\(n)=1")!, at: t0.advanced(by: .seconds(Int64(n + 1)))) }
        XCTAssertEqual(table.entries.count, 32)
        table.update(CarStatusLine("BAT=7.1")!, at: t0.advanced(by: .seconds(40)))  // BAT is fresh now
        for n in 0..<1000 { table.update(CarStatusLine("N\(n)=1")!, at: t0.advanced(by: .seconds(Int64(100 + n)))) }
        XCTAssertEqual(table.entries.count, CarStatusTable.defaultLimit)
        XCTAssertNil(table["BAT"], "a thousand newer keys pushed it out")
        XCTAssertEqual(table.entries.last?.key, "N999")
        var small = CarStatusTable(limit: 2)
        small.update(CarStatusLine("A=1;B=2")!, at: t0)
        small.update(CarStatusLine("A=3")!, at: t0.advanced(by: .seconds(1)))
        small.update(CarStatusLine("C=4")!, at: t0.advanced(by: .seconds(2)))
        XCTAssertEqual(small.entries.map(\.key), ["A", "C"], "B was heard from longest ago")
    }

    func testTheRuleParsesAndSaysWhatIsWrong() throws {
        XCTAssertEqual(try LowBatteryRule(parsing: "BAT<6.8"), LowBatteryRule(key: "BAT", threshold: 6.8))
        XCTAssertEqual(try LowBatteryRule(parsing: " PCT < 20 "), LowBatteryRule(key: "PCT", threshold: 20))
        XCTAssertEqual(LowBatteryRule(key: "BAT", threshold: 6.8).description, "BAT<6.8")
        XCTAssertEqual(LowBatteryRule(key: "PCT", threshold: 20).description, "PCT<20")
        func reason(_ text: String) -> String? {
            do {
                _ = try LowBatteryRule(parsing: text)
                return nil
            } catch {
                return error.reason
            }
        }
        XCTAssertEqual(reason("BAT>6.8"), "\"BAT>6.8\" is not KEY<NUMBER (e.g. \"BAT<6.8\": the BAT status key below 6.8)")
        XCTAssertEqual(reason("<6.8"), "\"\" is not a status key: a letter, then up to 15 letters, digits or _ (e.g. BAT)")
        XCTAssertEqual(reason("B AT<6.8"), "\"B AT\" is not a status key: a letter, then up to 15 letters, digits or _ (e.g. BAT)")
        XCTAssertEqual(reason("BAT<low"), "\"low\" after < is not a number (e.g. \"BAT<6.8\")")
        XCTAssertEqual(reason("BAT<"), "\"\" after < is not a number (e.g. \"BAT<6.8\")")
        XCTAssertNotNil(reason("BAT<6.8<7"))
    }

    func testTheAlarmWarnsOnceAndReArmsOnlyWellAboveTheThreshold() {
        var alarm = LowBatteryAlarm(rule: LowBatteryRule(key: "BAT", threshold: 6.8))
        func see(_ text: String) -> String? { alarm.observe(CarStatusLine(text)!).map(\.description) }
        XCTAssertNil(see("BAT=7.40;RSSI=-61"))
        XCTAssertNil(see("BAT=6.80"), "at the threshold is not below it")
        XCTAssertEqual(see("BAT=6.71"), "car battery low: BAT=6.71 (below 6.8)")
        XCTAssertTrue(alarm.isLow)
        XCTAssertNil(see("BAT=6.70"), "still low: no second warning")
        XCTAssertNil(see("BAT=6.85"), "hovering above the threshold does not re-arm")
        XCTAssertNil(see("BAT=6.99"))
        XCTAssertNil(see("BAT=6.79"), "nor does a fall after it")
        XCTAssertNil(see("RSSI=-70"), "a line without the key changes nothing")
        XCTAssertNil(see("BAT=charging"), "a value that is not a number changes nothing")
        XCTAssertEqual(see("BAT=7.00"), "car battery recovered: BAT=7.00", "0.2 above the threshold re-arms")
        XCTAssertFalse(alarm.isLow)
        XCTAssertNil(see("BAT=6.90"))
        XCTAssertEqual(see("BAT=6.50"), "car battery low: BAT=6.50 (below 6.8)", "armed again: a new fall warns")
        XCTAssertEqual(alarm.observe(CarStatusLine("BAT=8.1")!), .recovered(key: "BAT", value: "8.1"))
        XCTAssertEqual(alarm.observe(CarStatusLine("BAT=6.5;BAT=6.0")!), .low(key: "BAT", value: "6.0", threshold: 6.8),
                       "the last value of the key on the line counts")
    }
}
