import DriveCore

/// The rest rule of every analog throttle: a pad's trigger, a wheel's gas pedal, a phone's thumb stick.
///
/// After a stop the throttle did not ask for, it must come back to rest (its speed step 0) before it gives
/// a speed again, so a throttle held through the stop cannot restart the car by itself the moment the stop
/// is over. The stops that require rest, for every throttle alike (docs/input.md):
/// - lost input (the device, the browser or its sensor went away or silent);
/// - the brake (a wheel's brake pedal past its threshold);
/// - any other stop while the throttle asked for motion: the engine turned off, the link lost, a turn
///   ended, the idle timeout, a mode switched while moving (`carStopped(speed:)`: the drive state's speed
///   fell to 0 under a throttle that asked for more).
///
/// A new throttle starts at rest unless it is made `needsRest` (a phone's stick: a page that opens with the
/// stick held away from the centre must not launch the car). Pure.
public struct ThrottleRest: Hashable, Sendable {
    /// True after a stop until the throttle has been back at rest.
    public private(set) var needsRest: Bool

    /// A rule that starts waiting for rest when `needsRest`.
    public init(needsRest: Bool = false) {
        self.needsRest = needsRest
    }

    /// The throttle gives `speed` (its step now): true when it may be passed on. While rest is awaited only
    /// 0 ends the wait (and is passed on); anything else is held back.
    public mutating func admits(_ speed: Int) -> Bool {
        if needsRest {
            guard speed == 0 else { return false }
            needsRest = false
        }
        return true
    }

    /// The throttle stopped the car for a reason of its own kind (lost input, the brake): rest is required.
    public mutating func stopped() {
        needsRest = true
    }

    /// The drive state's speed after a step: when it fell to 0 while this throttle last asked for `asked`
    /// (more than 0), the car was stopped by something else, and rest is required.
    public mutating func carStopped(speed: Int, asked: Int?) {
        guard speed == 0, let asked, asked > 0 else { return }
        needsRest = true
    }

    /// The rest is known to have happened (a gas pedal that stayed lifted through the braking).
    public mutating func rested() {
        needsRest = false
    }
}
