/// The speed steps of an analog throttle (a trigger or pedal, a tilt rig's pitch, a balance board's lean):
/// where its travel is becomes a speed in steps of 10, rounded down (protocol §4), and the step changes
/// only when the travel passes one of the current step's two boundaries by `hysteresis` of a step, as
/// the angle range does with `hysteresis_deg` (protocol §3). Every analog throttle goes through one of
/// these, so a value resting on a boundary sends the stream and nothing more, whichever device it comes from.
///
/// The travel is given as a position in steps (2.6 is six tenths of the way from 20 to 30). Two places
/// have no margin: leaving rest (the first position after `rest()` takes its step at once, so the first
/// step comes right where the throttle's dead zone ends) and the end of travel (a position at or past
/// the limit is the limit, so full travel always gives full speed).
public struct SpeedSteps: Hashable, Sendable {
    /// The margin past a boundary, as a fraction of a step, 0…1 (config `[throttle] hysteresis`).
    public let hysteresis: Double
    /// The current step (the speed is 10 times it); 0 at rest.
    public private(set) var step = 0
    /// True at rest, until the next position.
    private var atRest = true

    /// The default margin: a quarter of a step.
    public static let defaultHysteresis = 0.25

    /// Steps with `hysteresis` of a step as the margin (a non-finite or negative one is 0, at most 1).
    public init(hysteresis: Double = SpeedSteps.defaultHysteresis) {
        self.hysteresis = hysteresis.isFinite ? min(max(hysteresis, 0), 1) : 0
    }

    /// The speed of the current step.
    public var speed: Int { step * 10 }

    /// The throttle is at rest (inside its dead zone): speed 0, and the next position is taken without a margin.
    public mutating func rest() {
        step = 0
        atRest = true
    }

    /// Moves to `position` (in steps, see above) with at most `limit` steps (the cap divided by 10); returns
    /// the speed. A non-finite position is rest.
    @discardableResult
    public mutating func update(position: Double, limit: Int) -> Int {
        guard position.isFinite else {
            rest()
            return 0
        }
        let top = max(limit, 0)
        // The 1e-9 keeps a position that is a whole step in decimal but a hair below it in binary on that step.
        let bare = Self.floor(position, top)
        // The current step holds while the position is within the margin past either of its own boundaries;
        // a move beyond that lands on its bare step.
        let holds = bare == step + 1 && position < Double(bare) + hysteresis
            || bare == step - 1 && position >= Double(step) - hysteresis
        if atRest || position >= Double(top) || !holds {
            step = bare
        }
        atRest = false
        return speed
    }

    /// `position` rounded down to whole steps, within 0…`top`.
    private static func floor(_ position: Double, _ top: Int) -> Int {
        let steps = (position + 1e-9).rounded(.down)
        guard steps > 0 else { return 0 }
        return steps >= Double(top) ? top : Int(steps)
    }
}
