import CLinux
import Foundation
import Glibc
import XCTest

/// A car host of the test's own: a network namespace joined to this one by a veth pair, with
/// link-local addresses in a /30 of its own picked at random (host `.1`, car `.2` of it: two test
/// runs at once, e.g. from two checkouts, would otherwise route to each other's car and be refused). `setCarLink(up:)` on the car's
/// end is a radio fade: packets are dropped silently, nothing is reset. With `wire: true` a third
/// namespace sits between the two (interfaces `wireHostInterface`, `wireCarInterface`, no
/// addresses) for a user-space wire such as `Tests/tools/delayline.py`. Needs root.
final class TestNetwork {
    /// The namespace's name (`ip netns`).
    let name: String
    /// The car's address inside the namespace.
    let carAddress: String
    /// The address of this namespace's end of the veth pair.
    let hostAddress: String
    /// The middle namespace, when there is one.
    let wireNamespace: String?
    /// The middle namespace's interface towards carbridge.
    let wireHostInterface: String
    /// The middle namespace's interface towards the car.
    let wireCarInterface: String
    private let hostInterface: String
    private let carInterface: String

    /// Skips the calling test unless it can create namespaces (root and `ip` present).
    static func requireRoot() throws {
        guard getuid() == 0 else { throw XCTSkip("fault injection needs root (ip netns, veth); CI runs as root") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
                || FileManager.default.isExecutableFile(atPath: "/sbin/ip") else {
            throw XCTSkip("fault injection needs iproute2 (`ip`)")
        }
    }

    /// Creates the namespace(s), the veth pair(s) and the addresses.
    init(wire: Bool = false) throws {
        let tag = "\(getpid() % 10_000)\(Int.random(in: 100...999))"
        name = "cbfade\(tag)"
        hostInterface = "cbh\(tag)"
        carInterface = "cbc\(tag)"
        wireNamespace = wire ? "cbwire\(tag)" : nil
        wireHostInterface = "cbm\(tag)a"
        wireCarInterface = "cbm\(tag)b"
        // 169.254.1.0–169.254.254.255 (RFC 3927 reserves the first and last /24).
        let subnet = "169.254.\(Int.random(in: 1...254))."
        let block = 4 * Int.random(in: 0..<64)
        hostAddress = subnet + "\(block + 1)"
        carAddress = subnet + "\(block + 2)"
        try Self.ip(["netns", "add", name])
        do {
            if let middle = wireNamespace {
                try Self.ip(["netns", "add", middle])
                try Self.ip(["link", "add", hostInterface, "type", "veth", "peer", "name", wireHostInterface])
                try Self.ip(["link", "add", wireCarInterface, "type", "veth", "peer", "name", carInterface])
                try Self.ip(["link", "set", wireHostInterface, "netns", middle])
                try Self.ip(["link", "set", wireCarInterface, "netns", middle])
                try Self.ip(["-n", middle, "link", "set", wireHostInterface, "up"])
                try Self.ip(["-n", middle, "link", "set", wireCarInterface, "up"])
            } else {
                try Self.ip(["link", "add", hostInterface, "type", "veth", "peer", "name", carInterface])
            }
            try Self.ip(["link", "set", carInterface, "netns", name])
            try Self.ip(["addr", "add", "\(hostAddress)/30", "dev", hostInterface])
            try Self.ip(["link", "set", hostInterface, "up"])
            try Self.ip(["-n", name, "addr", "add", "\(carAddress)/30", "dev", carInterface])
            try Self.ip(["-n", name, "link", "set", carInterface, "up"])
            try Self.ip(["-n", name, "link", "set", "lo", "up"])
        } catch {
            tearDown()
            throw error
        }
    }

    /// Takes the car's end of the link down (a radio fade) or up again.
    func setCarLink(up: Bool) throws {
        try Self.ip(["-n", name, "link", "set", carInterface, up ? "up" : "down"])
    }

    /// Deletes the namespace (and with it the veth pair).
    func tearDown() {
        _ = try? Self.ip(["link", "del", hostInterface])
        _ = try? Self.ip(["netns", "del", name])
        if let wireNamespace { _ = try? Self.ip(["netns", "del", wireNamespace]) }
    }

    deinit { tearDown() }

    /// Runs `ip ARGS`; throws with its stderr when it fails.
    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
            ? "/usr/sbin/ip" : "/sbin/ip")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw NetworkSetupFailed(command: "ip " + arguments.joined(separator: " "), output: text)
        }
        return text
    }
}

/// An `ip` command failed.
struct NetworkSetupFailed: Error, CustomStringConvertible {
    let command: String
    let output: String
    var description: String { "\(command) failed: \(output)" }
}

/// A TCP socket created inside network namespace `name` (on a short-lived thread that joins it).
func socketInNamespace(_ name: String) throws -> Int32 {
    final class Box: @unchecked Sendable {
        var fd: Int32 = -1
        var failure: Int32 = 0
    }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        defer { done.signal() }
        let nsFD = open("/var/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
        guard nsFD >= 0 else { box.failure = errno; return }
        defer { close(nsFD) }
        guard cb_setns(nsFD, cb_CLONE_NEWNET()) == 0 else { box.failure = errno; return }
        box.fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if box.fd < 0 { box.failure = errno }
    }
    thread.start()
    done.wait()
    guard box.fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: box.failure) ?? .EPERM) }
    return box.fd
}
