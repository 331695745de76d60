import DriveCore
import DriveInputModel

/// Hands-free driving: the throttle from a lean (a tilt rig's pitch or a balance board's centre of
/// pressure), the board's sideways lean as steering, and arming and the dead-man from the rider's
/// presence (`HandsFreeArming`). Pure; `ControlMapper` owns one and feeds it.
///
/// It produces only existing controls for `DriveMachine` (`.engine`, `.setSpeed`, `.gear`), worked
/// out against the machine's current state (`drive`, which the caller keeps up to date), so a toggle
/// is only sent when it changes the right way. The rules:
/// - the throttle acts only while armed (when arming is on) and with the engine on;
/// - it never jumps from standing: arming happens inside the dead zone (speed 0); after every stop (stepping off, leaning back, a stop
///   the machine made by itself: input loss, the link, the idle timeout) the lean must come back
///   inside the dead zone before a lean past it gives a speed again, and with arming a lost board or
///   sensor must arm again when it is back;
/// - the speed steps hold on a boundary (`SpeedSteps`, `[throttle] hysteresis`);
/// - reverse (`LeanThrottleMapper.Settings.reverse`) goes through the gear with a stop in between:
///   the stop frame, `.gear`, then the speed.
public struct HandsFreeMapper: Hashable, Sendable {
    /// Where the throttle lean comes from.
    public enum ThrottleSource: Hashable, Sendable {
        /// The pitch of the accelerometer, through its own tilt mapper (axis pair, neutral, filter).
        case tilt(pitch: TiltMapper.Settings, lean: LeanThrottleMapper.Settings)
        /// The board's forward centre of pressure.
        case board
    }

    /// Everything the hands-free part needs from the config.
    public struct Settings: Hashable, Sendable {
        /// The throttle's source; nil = no hands-free throttle.
        public var throttle: ThrottleSource?
        /// The board's sideways centre of pressure steers.
        public var boardSteers: Bool
        /// The board's dead zone and full scale (fractions of its half-width), also for its steering.
        public var boardLean: LeanThrottleMapper.Settings
        /// The board's presence threshold and hysteresis.
        public var presence: WeightPresence
        /// Arming and the dead-man; nil = the engine is the driver's (buttons), presence only stops.
        public var arming: HandsFreeArming.Settings?

        /// Creates settings; by default nothing is hands-free.
        public init(
            throttle: ThrottleSource? = nil, boardSteers: Bool = false,
            boardLean: LeanThrottleMapper.Settings = .init(deadZone: 0.1, fullScale: 0.5),
            presence: WeightPresence = .init(), arming: HandsFreeArming.Settings? = nil
        ) {
            self.throttle = throttle
            self.boardSteers = boardSteers
            self.boardLean = boardLean
            self.presence = presence
            self.arming = arming
        }

        /// True when the board is used at all.
        public var usesBoard: Bool { boardSteers || throttle == .board }
    }

    /// The settings.
    public let settings: Settings
    private var pitch: TiltMapper?
    private let tiltLean: LeanThrottleMapper?
    private let boardLean: LeanThrottleMapper
    /// The board's four cells as last reported.
    public private(set) var board = BalanceBoardReading()
    /// Whether a rider stands on the board.
    public private(set) var presence: WeightPresence
    /// Arming; nil when off.
    public private(set) var arming: HandsFreeArming?
    /// True until the lean has been back inside the dead zone after arming or a stop.
    public private(set) var needsNeutral = true
    /// The speed last asked for.
    private var commandedSpeed = 0 {
        didSet { if commandedSpeed == 0 { leanSteps.rest() } }
    }
    /// The throttle's current speed step (its hysteresis); at rest whenever the speed asked for is 0.
    private var leanSteps: SpeedSteps
    /// The last throttle lean (degrees of pitch, or the board's forward centre of pressure).
    public private(set) var lastThrottleLean: Double?

    /// Creates the mapper.
    public init(settings: Settings) {
        self.settings = settings
        if case .tilt(let pitch, let lean) = settings.throttle {
            leanSteps = SpeedSteps(hysteresis: lean.hysteresis)
            self.pitch = TiltMapper(settings: pitch)
            tiltLean = LeanThrottleMapper(settings: lean)
        } else {
            leanSteps = SpeedSteps(hysteresis: settings.boardLean.hysteresis)
            pitch = nil
            tiltLean = nil
        }
        boardLean = LeanThrottleMapper(settings: settings.boardLean)
        presence = settings.presence
        arming = settings.arming.map { HandsFreeArming(settings: $0) }
    }

    /// What the rider is doing, for the views.
    public var reading: HandsFreeReading {
        let arming: HandsFreeReading.Arming
        switch self.arming?.state {
        case nil: arming = .off
        case .absent?, .unsettled?: arming = .waiting
        case .settling?: arming = .settling
        case .armed?: arming = .armed
        case .leaving?: arming = .leaving
        }
        let centre = settings.usesBoard ? board.centreOfPressure : nil
        return HandsFreeReading(
            arming: arming, pitchDegrees: pitch != nil ? lastThrottleLean : nil,
            weightKilograms: settings.usesBoard ? board.weight : nil, centreX: centre?.x, centreY: centre?.y)
    }

    /// The earliest instant `tick` has work (arming, the engine going off); nil when none.
    public var nextDeadline: Instant? { arming?.nextDeadline }

    /// The pitch tilt settings (its neutral after calibration); nil without a tilt throttle.
    public var pitchSettings: TiltMapper.Settings? { pitch?.settings }

    /// The pitch in degrees of `gravity` before neutral: what `carbridge calibrate` stores; nil without a tilt throttle.
    public func rawPitchDegrees(_ gravity: Vector3) -> Double? { pitch?.rawRollDegrees(gravity) }

    /// One accelerometer sample at `now`; `rollDegrees` is tilt steering's current θ (for stillness).
    public mutating func tilt(
        gravity: Vector3, rollDegrees: Double?, at now: Instant, drive: DriveState, into events: inout [MappedEvent]
    ) {
        guard let tiltLean, let lean = pitch?.update(gravity: gravity, at: now) else { return }
        lastThrottleLean = lean
        var drive = drive
        if arming != nil {
            let still = tiltLean.isInDeadZone(lean) && (rollDegrees.map { tiltLean.isInDeadZone($0) } ?? true)
            arm(present: true, still: still, at: now, drive: &drive, into: &events)
        }
        throttle(lean: lean, mapper: tiltLean, drive: drive, into: &events)
    }

    /// One board frame at `now`; returns the steering angle when the board steers and a cell changed.
    public mutating func board(
        axes: [AxisValue], at now: Instant, drive: DriveState, into events: inout [MappedEvent]
    ) -> Double? {
        guard board.apply(axes) else { return nil }
        let present = presence.update(kilograms: board.weight)
        let centre = board.centreOfPressure
        var drive = drive
        if arming != nil {
            let still = boardLean.isInDeadZone(centre.x) && boardLean.isInDeadZone(centre.y)
            arm(present: present, still: still, at: now, drive: &drive, into: &events)
        } else if !present, drive.engineOn {
            // Presence is the dead-man even without arming.
            stop(drive: drive, into: &events)
        }
        if settings.throttle == .board {
            lastThrottleLean = centre.y
            if present { throttle(lean: centre.y, mapper: boardLean, drive: drive, into: &events) }
        }
        return settings.boardSteers ? boardLean.steeringDegrees(for: centre.x) : nil
    }

    /// Does what is due at `now` (arming, the engine going off).
    public mutating func tick(at now: Instant, drive: DriveState, into events: inout [MappedEvent]) {
        guard let actions = arming?.tick(at: now) else { return }
        var drive = drive
        perform(actions, drive: &drive, into: &events)
    }

    /// The device went away: forget the rider, the filter and the cells; the loss itself stops the car. With
    /// arming, the device coming back is a new rider: a full `armAfter` still hold before the throttle acts.
    public mutating func deviceLost(role: DeviceRole) {
        switch role {
        case .accelerometer:
            guard pitch != nil else { return }
            pitch?.reset()
        case .board:
            board = BalanceBoardReading()
            presence.reset()
        case .gamepad, .keyboard:
            return
        }
        arming?.reset()
        needsNeutral = true
        commandedSpeed = 0
        lastThrottleLean = nil
    }

    /// Makes the current pitch of `gravity` the new neutral; returns it (nil: no tilt throttle or no direction).
    @discardableResult
    public mutating func calibratePitch(from gravity: Vector3) -> Double? {
        pitch?.calibrate(from: gravity)
    }

    // MARK: - Helpers

    private mutating func arm(present: Bool, still: Bool, at now: Instant, drive: inout DriveState, into events: inout [MappedEvent]) {
        guard let actions = arming?.update(present: present, still: still, at: now) else { return }
        perform(actions, drive: &drive, into: &events)
    }

    /// Turns arming's actions into controls; `drive` is updated to what they will make of the machine's
    /// state (the engine), so the throttle in the same sample works against it.
    private mutating func perform(_ actions: [HandsFreeArming.Action], drive: inout DriveState, into events: inout [MappedEvent]) {
        var engineOn = drive.engineOn
        defer {
            drive.engineOn = engineOn
            if !engineOn { drive.speed = 0 }
        }
        for action in actions {
            switch action {
            case .arm:
                if !engineOn { events.append(.control(.engine)) }
                engineOn = true
                // Arming needs a still rider, inside the dead zone: the speed is 0 and the next lean past
                // the dead zone is the first step.
                needsNeutral = false
                commandedSpeed = 0
            case .stop:
                stop(drive: drive, into: &events)
                drive.speed = 0
            case .engineOff:
                if engineOn { events.append(.control(.engine)) }
                engineOn = false
                needsNeutral = true
                commandedSpeed = 0
            }
        }
    }

    /// S := 0 now (the stop frame), and the throttle waits for neutral.
    private mutating func stop(drive: DriveState, into events: inout [MappedEvent]) {
        if drive.engineOn { events.append(.control(.setSpeed(0))) }
        needsNeutral = true
        commandedSpeed = 0
    }

    private mutating func throttle(
        lean: Double, mapper: LeanThrottleMapper, drive: DriveState, into events: inout [MappedEvent]
    ) {
        let armed = arming?.isArmed ?? true
        guard armed, drive.engineOn else {
            needsNeutral = true
            commandedSpeed = 0
            return
        }
        if commandedSpeed > 0, drive.speed == 0 {
            // The machine stopped by itself (input loss, the link, a refused speed): wait for neutral.
            needsNeutral = true
            commandedSpeed = 0
        }
        if needsNeutral {
            guard mapper.isInDeadZone(lean) else { return }
            needsNeutral = false
        }
        let command = mapper.command(for: lean, steps: &leanSteps)
        if command.speed == 0 {
            if drive.speed > 0 { events.append(.control(.setSpeed(0))) }
            if lean < 0, !mapper.isInDeadZone(lean) { needsNeutral = true }
            commandedSpeed = 0
            return
        }
        let direction = command.backwards ? 0 : 1
        var turned = false
        if drive.direction != direction {
            if drive.speed > 0 { events.append(.control(.setSpeed(0))) }
            events.append(.control(.gear))
            turned = true
        }
        if turned || command.speed != drive.speed { events.append(.control(.setSpeed(command.speed))) }
        commandedSpeed = command.speed
    }
}
