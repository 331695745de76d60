import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import DriveSystem
import Logging

/// The run's input devices: the `InputCoordinator` for the configured gamepad, accelerometer and
/// key devices (udev-watched), or for an evemu recording replayed once the link is up. Does
/// nothing when no device is configured and nothing is replayed.
final class InputService: RunService {
    let name = "inputs"
    /// The recording ended (after its lost-input stop): the run ends.
    var onReplayFinished: () -> Void = {}
    /// A device came or went: the descriptions of the open ones.
    var onDevicesChanged: ([String]) -> Void = { _ in }

    private let config: CarbridgeConfig
    private let options: RunSession.Options
    private let loop: EventLoop
    private let bridge: Bridge
    private let model: RunViewModel
    private let logger: Logger
    private(set) var coordinator: InputCoordinator?
    private var planner = FeedbackPlanner(maxSpeed: 0, sessionLimit: nil)
    private var feedbackTimer: DeadlineTimer?

    /// The inputs `config` and `options` ask for, feeding `bridge`.
    init(config: CarbridgeConfig, options: RunSession.Options, loop: EventLoop, bridge: Bridge, model: RunViewModel, logger: Logger) {
        self.config = config
        self.options = options
        self.loop = loop
        self.bridge = bridge
        self.model = model
        self.logger = logger
    }

    func start() throws {
        startFeedback()
        defer {
            if model.inputs.isEmpty && options.replay == nil {
                logger.notice("no input source: the car stays stopped (stdin is not a terminal and no device is configured)")
            }
        }
        let wantsDevices = options.replay != nil || (options.devices && !DevicePicker(config: config).entries
            .allSatisfy { $0.match == nil })
        guard wantsDevices else { return }
        let inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        coordinator = inputs
        // The bridge strongly: it never holds the coordinator, so there is no cycle, and the two calls of every
        // input report cost no weak load (an exclusivity check, a side-table retain and release each).
        let bridge = self.bridge
        inputs.onControl = { control in bridge.apply(control) }
        inputs.driveState = { bridge.state }
        // The model strongly, for the same reason (it holds no input; the bridge keeps it anyway).
        let model = self.model
        inputs.onHandsFree = { reading in model.handsFree = reading }
        // `inputs` unowned, not weak: the closure is its own (a weak reference would give the coordinator a side
        // table, and every retain of it on the per-report path the slow path).
        inputs.onDeviceChange = { [weak self, unowned inputs] _, _ in
            guard let self else { return }
            self.onDevicesChanged(inputs.activeDescriptions)
        }
        inputs.onCalibrate = { [weak self] neutrals in self?.calibrated(neutrals) }
        if let recording = options.replay {
            inputs.onReplayFinished = { [weak self] in
                self?.bridge.apply(.inputLost)
                self?.onReplayFinished()
            }
            // Let the link come up first so the recording's first frames are not lost. The link starts
            // before this service, and a link that is up at once (stdout) is up already.
            bridge.onLinkUp = { [weak self] in
                guard let inputs = self?.coordinator, !inputs.isReplaying else { return }
                inputs.startReplay(recording)
            }
            if bridge.linkIsUp { inputs.startReplay(recording) }
        } else {
            do {
                try inputs.startWatching()
            } catch {
                logger.warning("input devices unavailable (\(error)); only the keyboard drives")
            }
        }
    }

    func stop() {
        feedbackTimer?.cancel()
        model.onBridgeEvent = nil
        coordinator?.stop()
    }

    /// Tells the driver what the car is doing: `FeedbackPlanner` over the bridge's events (a kiosk turn's
    /// warning on a loop timer). Each event is played on the pads' rumble motors when `[feedback] rumble`
    /// is on, and listed for the views (the dashboard) either way.
    private func startFeedback() {
        planner = FeedbackPlanner(maxSpeed: config.drive.speedCeiling, sessionLimit: config.kiosk.sessionLimit)
        let timer = DeadlineTimer(loop: loop) { [weak self] in
            guard let self else { return }
            self.tell(self.planner.tick(at: self.loop.now()))
            self.feedbackTimer?.arm(at: self.planner.nextDeadline)
        }
        feedbackTimer = timer
        model.onBridgeEvent = { [weak self] event in
            guard let self else { return }
            self.tell(self.planner.handle(event, at: self.loop.now()))
            self.feedbackTimer?.arm(at: self.planner.nextDeadline)
        }
    }

    /// Plays `events` (one `write` per pad with rumble) and records them for the views.
    private func tell(_ events: [FeedbackEvent]) {
        guard !events.isEmpty else { return }
        let now = loop.now()
        for event in events {
            if config.feedback.rumble { coordinator?.rumble(event) }
            model.record(event, at: now)
        }
    }

    /// `carbridge calibrate`'s gesture during a run: the roll's neutral and, with a tilt throttle, the
    /// pitch's are saved in the config file, as `carbridge calibrate` saves them.
    private func calibrated(_ neutrals: TiltNeutrals) {
        for (key, degrees) in neutrals.configValues {
            let setting = "[\(key.table)] \(key.name) = \(ConfigFileEditor.roundedNeutral(degrees))"
            guard let file = config.file else {
                logger.notice("calibrated: \(setting) (no config file to save it in; use --config)")
                continue
            }
            do {
                try ConfigFileEditor.saveNeutral(degrees, file: file, resolver: EventCodeNames(), key: key)
                logger.notice("calibrated: \(setting), saved in \(file)")
            } catch {
                logger.error("calibrated (\(setting)) but could not save it in \(file): \(error)")
            }
        }
    }
}
