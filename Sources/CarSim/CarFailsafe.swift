import DriveCore

/// The car's failsafe (docs/protocol.md §8), as the reference firmware implements it: while the car
/// moves (the last motion frame had S > 0), no valid frame for `timeout` stops it, and it stays stopped
/// until the next motion frame. Any valid frame keeps the link alive; only motion and `E` frames change
/// what the motors do, so an F frame after a failsafe stop does not start them again.
package struct CarFailsafe: Hashable, Sendable {
    /// How long the car moves without a valid frame; nil = no failsafe.
    package let timeout: Duration?
    /// True while the motors run.
    package private(set) var isMoving = false
    /// When the last valid frame arrived.
    package private(set) var lastFrameAt: Instant?
    /// How many times the failsafe stopped the car.
    package private(set) var stopCount = 0

    /// Creates a stopped car whose failsafe trips after `timeout` (the protocol's default: 300 ms).
    package init(timeout: Duration? = .milliseconds(300)) { self.timeout = timeout }

    /// When the failsafe will stop the car if no valid frame comes; nil while stopped.
    package var deadline: Instant? {
        guard isMoving, let timeout, let lastFrameAt else { return nil }
        return lastFrameAt + timeout
    }

    /// Takes a valid frame received at `time`.
    package mutating func receive(_ frame: Frame, at time: Instant) {
        lastFrameAt = time
        if frame.isMotion {
            isMoving = frame.speed > 0
        } else if frame.kind == .engineOff {
            isMoving = false
        }
    }

    /// Stops the car if its deadline has passed at `now`; true when it did so just now.
    package mutating func check(at now: Instant) -> Bool {
        guard let deadline, now >= deadline else { return false }
        isMoving = false
        stopCount += 1
        return true
    }
}
