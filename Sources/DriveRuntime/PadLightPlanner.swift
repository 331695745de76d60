import DriveConfig
import DriveCore
import DriveInputModel

/// What a pad's light shows, most urgent first: a pad shows the first state that holds.
///
/// - `linkDown`: nothing reaches the car (before the link first comes up too);
/// - `inputRefused`: the drive machine refuses motion because a driving input is lost (`.inputLost` until
///   `.inputRestored`: an accelerometer, a board or the browser that steered went away or silent while this
///   pad stayed): Speed+ does nothing until the input is back;
/// - `batteryLow`: this pad's battery is low (`[feedback] pad_low_battery`), a warning that needs the driver;
/// - `driving`: engine on, speed above 0;
/// - `stopped`: engine on, speed 0;
/// - `engineOff`.
public enum PadLightState: String, CaseIterable, Hashable, Sendable {
    case linkDown = "link_down"
    case inputRefused = "input_refused"
    case batteryLow = "battery_low"
    case driving
    case stopped
    case engineOff = "engine_off"

    /// The state's colour in `feedback` (its `light_…` key).
    public func colour(in feedback: CarbridgeConfig.Feedback) -> LightColour {
        switch self {
        case .linkDown: return feedback.lightLinkDown
        case .inputRefused: return feedback.lightInputRefused
        case .batteryLow: return feedback.lightBatteryLow
        case .driving: return feedback.lightDriving
        case .stopped: return feedback.lightStopped
        case .engineOff: return feedback.lightEngineOff
        }
    }
}

/// Decides the pads' light from what the bridge reports (the link, the drive state, lost and restored input)
/// and each pad's battery. Pure: state in, `PadLightState` out; `FeedbackService` writes its colour.
public struct PadLightPlanner: Hashable, Sendable {
    /// Whether the link is up.
    public private(set) var linkUp = false
    /// Whether a driving input is lost (the machine refuses motion).
    public private(set) var inputMissing = false
    /// Whether the engine is on.
    public private(set) var engineOn = false
    /// Whether the speed is above 0.
    public private(set) var moving = false

    /// A planner before anything happened: link down, engine off.
    public init() {}

    /// Takes in `event`; true when it changed what a light shows (a new speed above 0, a steer, do not).
    @discardableResult
    public mutating func handle(_ event: BridgeEvent) -> Bool {
        let before = self
        switch event {
        case .state(let state):
            engineOn = state.engineOn
            moving = state.speed > 0
        case .link(let up):
            linkUp = up
        case .applied(.inputLost):
            inputMissing = true
        case .applied(.inputRestored):
            inputMissing = false
        case .applied, .carBattery:
            break
        }
        return self != before
    }

    /// What a pad whose battery is low (`batteryLow`) or not shows now: the first state that holds.
    public func state(batteryLow: Bool) -> PadLightState {
        if !linkUp { return .linkDown }
        if inputMissing { return .inputRefused }
        if batteryLow { return .batteryLow }
        if engineOn { return moving ? .driving : .stopped }
        return .engineOff
    }
}
