import DriveCore
import XCTest

/// The frames' texts, e.g. `["M,0,40,1"]`.
func texts<Frames: Sequence<Frame>>(_ frames: Frames) -> [String] { frames.map(\.text) }

/// An instant `ms` milliseconds after the origin.
func ms(_ milliseconds: Int64) -> Instant { .milliseconds(milliseconds) }

extension DriveMachine {
    /// Handles several controls at one instant and returns all frame texts.
    mutating func apply(_ controls: [Control], at now: Instant = .zero) -> [String] {
        controls.flatMap { texts(handle($0, at: now)) }
    }

    /// A machine whose link is up (the handshake `E,0,0,0` already taken), engine off.
    static func connected(_ settings: DriveSettings = .init(), at now: Instant = .zero) -> DriveMachine {
        var machine = DriveMachine(settings: settings)
        _ = machine.handle(.linkUp, at: now)
        return machine
    }

    /// A machine with the link up and the engine already on.
    static func running(_ settings: DriveSettings = .init(), at now: Instant = .zero) -> DriveMachine {
        var machine = connected(settings, at: now)
        _ = machine.handle(.engine, at: now)
        return machine
    }
}

/// A small deterministic pseudo-random generator (xorshift) for jitter and noise.
struct TestRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    /// A value in 0..<bound.
    mutating func below(_ bound: Int64) -> Int64 { Int64(next() % UInt64(bound)) }
    /// A real in lower...upper.
    mutating func real(_ lower: Double, _ upper: Double) -> Double {
        lower + (upper - lower) * Double(next() % 1_000_001) / 1_000_000
    }
}
