import CLinux
import CarSim
import DriveCore
import DriveLink
import DriveSystem
import DriveTestSupport
import Glibc
import XCTest

/// The simulated car against docs/car-vectors.txt, the vectors the reference firmware's host tests
/// (car/test/host_tests.cpp) run too: both accept and reject the same lines, and both fail safe alike.
final class CarVectorTests: XCTestCase {
    /// One line of the vector file.
    private enum Vector {
        case accept(String)
        case reject(String)
        case timeline(failsafeMilliseconds: Int64, events: [(at: Int64, what: String)])
    }

    private static let vectorFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/car-vectors.txt")

    /// Decodes `\s \r \n \t \\ \xNN`.
    private static func unescape(_ text: String) throws -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            switch input.popFirst() {
            case UInt8(ascii: "s"): bytes.append(0x20)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "x"):
                let hex = String(decoding: input.prefix(2), as: UTF8.self)
                input = input.dropFirst(2)
                bytes.append(try XCTUnwrap(UInt8(hex, radix: 16), "bad \\x escape in \(text)"))
            default: throw CarFrameError(line: text, reason: "bad escape")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func vectors() throws -> [(line: String, vector: Vector)] {
        let text = try String(contentsOf: Self.vectorFile, encoding: .utf8)
        var result: [(String, Vector)] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if raw.isEmpty || raw.hasPrefix("#") { continue }
            if raw.hasPrefix("accept ") {
                result.append((raw, .accept(try Self.unescape(String(raw.dropFirst(7))))))
            } else if raw.hasPrefix("reject ") {
                result.append((raw, .reject(try Self.unescape(String(raw.dropFirst(7))))))
            } else if raw.hasPrefix("timeline ") {
                let body = raw.dropFirst(9)
                let colon = try XCTUnwrap(body.firstIndex(of: ":"), raw)
                let failsafe = try XCTUnwrap(Int64(body[..<colon]), raw)
                var events: [(Int64, String)] = []
                for event in body[body.index(after: colon)...].split(separator: " ") {
                    let separator = try XCTUnwrap(event.firstIndex(of: ":"), raw)
                    let at = try XCTUnwrap(Int64(event[..<separator]), raw)
                    events.append((at, String(event[event.index(after: separator)...])))
                }
                result.append((raw, .timeline(failsafeMilliseconds: failsafe, events: events)))
            } else {
                XCTFail("unknown vector kind: \(raw)")
            }
        }
        return result
    }

    func testTheVectorFileHasEveryKind() throws {
        let all = try vectors()
        XCTAssertGreaterThan(all.filter { if case .accept = $0.vector { true } else { false } }.count, 5)
        XCTAssertGreaterThan(all.filter { if case .reject = $0.vector { true } else { false } }.count, 20)
        XCTAssertGreaterThan(all.filter { if case .timeline = $0.vector { true } else { false } }.count, 5)
    }

    func testFrameVectorsParseAsTheFirmwareParses() throws {
        for (raw, vector) in try vectors() {
            switch vector {
            case .accept(let line):
                if case .failure(let error) = CarFrameParser.parse(line) { XCTFail("\(raw): rejected (\(error.reason))") }
            case .reject(let line):
                if case .success(let frame) = CarFrameParser.parse(line) { XCTFail("\(raw): accepted as \(frame)") }
            case .timeline:
                continue
            }
        }
    }

    /// Each timeline through a `CarSimulatorSession` on a manual clock: lines at their instants, the
    /// failsafe's timer firing as time advances, the motors checked where the vector says.
    func testTimelinesFailSafeAsTheFirmwareDoes() throws {
        for (raw, vector) in try vectors() {
            guard case .timeline(let failsafe, let events) = vector else { continue }
            let loop = try EventLoop(clock: .manual)
            var fds: [Int32] = [-1, -1]
            XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
            defer { Glibc.close(fds[0]) }
            try Syscall.setNonBlocking(fds[1])
            let session = CarSimulatorSession(
                fd: fds[1], name: "vector", loop: loop,
                options: .init(statusInterval: nil, failsafe: .milliseconds(failsafe)))
            var rules = CarModel()
            let start = loop.now()
            for (at, what) in events {
                try loop.advance(to: start + .milliseconds(at))
                switch what {
                case "moving": XCTAssertTrue(session.isMoving, "\(raw): not moving at \(at) ms")
                case "stopped": XCTAssertFalse(session.isMoving, "\(raw): moving at \(at) ms")
                default:
                    let line = try Self.unescape(what)
                    session.receive(line: line, at: loop.now())
                    if case .success(let frame) = CarFrameParser.parse(line) {
                        XCTAssertEqual(rules.receive(frame), [], "\(raw): \(what) broke a rule")
                    }
                }
            }
            session.close()
        }
    }

    /// The bug this fixes: car-sim printed `VIOLATION: speed jumped from 30 to 0` for carbridge's
    /// stop frame. A stop is always allowed, over a real serial link to the pty car.
    func testAStopFromAnySpeedIsNoViolation() throws {
        let loop = try EventLoop()
        let simulator = CarSimulator(
            loop: loop, configuration: .init(listenHost: nil, pty: true, session: .init(statusInterval: nil)))
        var violations: [String] = []
        var frames: [Frame] = []
        simulator.onViolation = { reason, _ in violations.append(reason) }
        simulator.onFrame = { frame, _ in frames.append(frame) }
        try simulator.start()
        let link = SerialLink(connector: SerialConnector(path: try XCTUnwrap(simulator.ptyPath), baud: 9600), loop: loop)
        let recorder = LinkRecorder(link)
        link.start()
        for (count, speed) in [10, 20, 30, 0].enumerated() {
            link.send(.motion(range: 0, speed: speed, direction: 1))
            XCTAssertTrue(try spin(loop) { frames.count == count + 1 })
        }
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("CAR stopped (forward, straight)") })
        XCTAssertEqual(frames.map(\.speed), [10, 20, 30, 0])
        XCTAssertEqual(violations, [])
        XCTAssertFalse(recorder.lines.contains { $0.hasPrefix("ERR") })
        var done = false
        link.shutdown(flushWithin: .milliseconds(200)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
        simulator.stop()
    }

    /// car-sim's failsafe over a real link: the bridge stops streaming at S = 30 without a stop
    /// frame, and the car says `CAR failsafe stop` once its 300 ms have passed.
    func testTheSimulatedCarStopsItselfWhenTheStreamStops() throws {
        let loop = try EventLoop()
        let link = SimulatedCarLink(simulatedOn: loop, options: .init(statusInterval: nil))
        let recorder = LinkRecorder(link)
        link.start()
        let sent = loop.now()
        link.send(.motion(range: 0, speed: 10, direction: 1))
        XCTAssertTrue(try spin(loop) { recorder.lines.contains("CAR failsafe stop") })
        XCTAssertGreaterThanOrEqual(loop.now() - sent, .milliseconds(300))
        XCTAssertEqual(link.car?.isMoving, false)
        XCTAssertEqual(link.car?.failsafe.stopCount, 1)
        XCTAssertEqual(link.car?.action, "stopped (failsafe: no frame for 300 ms)")
        var done = false
        link.shutdown(flushWithin: .milliseconds(200)) { _ in done = true }
        XCTAssertTrue(try spin(loop) { done })
    }
}
