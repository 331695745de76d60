import DriveConfig
import DriveCore
import DriveInput
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
    @exclusivity(unchecked) private var planner = FeedbackPlanner(maxSpeed: 0, sessionLimit: nil)
    @exclusivity(unchecked) private var feedbackTimer: DeadlineTimer?

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
        inputs.onControl = { [weak bridge] control in bridge?.apply(control) }
        inputs.driveState = { [weak bridge] in bridge?.state ?? .initial }
        inputs.onHandsFree = { [weak model] reading in model?.handsFree = reading }
        inputs.onDeviceChange = { [weak self, weak inputs] _, _ in
            guard let self, let inputs else { return }
            self.onDevicesChanged(inputs.activeDescriptions)
        }
        inputs.onCalibrate = { [weak self] neutral in self?.calibrated(neutral) }
        if config.feedback.rumble { startFeedback(inputs) }
        if let recording = options.replay {
            inputs.onReplayFinished = { [weak self] in
                self?.bridge.apply(.inputLost)
                self?.onReplayFinished()
            }
            // Let the link come up first so the recording's first frames are not lost.
            bridge.onLinkUp = { [weak inputs] in
                guard let inputs, !inputs.isReplaying else { return }
                inputs.startReplay(recording)
            }
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

    /// The pad's rumble follows the bridge (`FeedbackPlanner`); a kiosk turn's warning on a loop timer.
    private func startFeedback(_ inputs: InputCoordinator) {
        planner = FeedbackPlanner(maxSpeed: config.drive.speedCeiling, sessionLimit: config.kiosk.sessionLimit)
        let timer = DeadlineTimer(loop: loop) { [weak self, weak inputs] in
            guard let self, let inputs else { return }
            for cue in self.planner.tick(at: self.loop.turnTime()) { inputs.rumble(cue) }
            self.feedbackTimer?.arm(at: self.planner.nextDeadline)
        }
        feedbackTimer = timer
        model.onBridgeEvent = { [weak self, weak inputs] event in
            guard let self, let inputs else { return }
            for cue in self.planner.handle(event, at: self.loop.turnTime()) { inputs.rumble(cue) }
            self.feedbackTimer?.arm(at: self.planner.nextDeadline)
        }
    }

    /// `carbridge calibrate`'s gesture during a run: the neutral is saved in the config file.
    private func calibrated(_ neutral: Double) {
        let rounded = ConfigFileEditor.roundedNeutral(neutral)
        guard let file = config.file else {
            logger.notice("calibrated: neutral_deg = \(rounded) (no config file to save it in; use --config)")
            return
        }
        do {
            try ConfigFileEditor.saveNeutral(neutral, file: file, resolver: EventCodeNames())
            logger.notice("calibrated: neutral_deg = \(rounded), saved in \(file)")
        } catch {
            logger.error("calibrated (neutral_deg = \(rounded)) but could not save it in \(file): \(error)")
        }
    }
}
