import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import DriveSystem
import Logging

/// The run's input devices: the `InputCoordinator` for the configured gamepad, accelerometer and
/// key devices (udev-watched), or for an evemu recording replayed once the link is up. Does
/// nothing when no device is configured and nothing is replayed. Its controls go to the bridge; its
/// devices' comings and goings and the hands-free rider's reading are published to the run's events.
final class InputService: RunService {
    let name = "inputs"
    /// The recording ended (after its lost-input stop): the run ends.
    var onReplayFinished: () -> Void = {}

    private let config: CarbridgeConfig
    private let options: RunSession.Options
    private let loop: EventLoop
    private let bridge: Bridge
    /// Calibrations being written to the config file on a helper thread.
    private var savesInFlight: [Offloaded<[(level: Logger.Level, line: String)]>] = []
    private let logger: Logger
    private let model: RunViewModel
    private(set) var coordinator: InputCoordinator?

    /// The inputs `config` and `options` ask for, feeding `bridge` (`model`: which inputs are in use).
    init(
        config: CarbridgeConfig, options: RunSession.Options, loop: EventLoop, bridge: Bridge, model: RunViewModel,
        logger: Logger
    ) {
        self.model = model
        self.config = config
        self.options = options
        self.loop = loop
        self.bridge = bridge
        self.logger = logger
    }

    func start() throws {
        defer {
            // A dashboard with controls is an input too (browsers and phones drive through it).
            let browsersDrive = config.dashboard.listen != nil && config.dashboard.controls
            if model.snapshot.inputs.isEmpty && options.replay == nil && !browsersDrive {
                logger.notice("no input source: the car stays stopped (stdin is not a terminal and no device is configured)")
            }
        }
        let events = bridge.events
        let wantsDevices = options.replay != nil || (options.devices && !DevicePicker(config: config).entries
            .allSatisfy { $0.match == nil })
        guard wantsDevices else { return }
        let inputs = try InputCoordinator(config: config, loop: loop, logger: logger)
        coordinator = inputs
        events.subscribe(inputs)
        // The bridge and its events strongly: they keep the coordinator only until `stop()` (and the session's
        // end empties the events), so nothing keeps the other past the run.
        let bridge = self.bridge
        inputs.onControl = { control in bridge.apply(control) }
        inputs.onHandsFree = { reading in events.publish(.handsFree(reading)) }
        inputs.onDeviceChange = { change in events.publish(.device(change)) }
        inputs.onCalibrate = { [weak self] neutrals in self?.calibrated(neutrals) }
        if let recording = options.replay {
            inputs.onReplayFinished = { [weak self] in
                self?.bridge.apply(.inputLost)
                self?.onReplayFinished()
            }
            // Let the link come up first so the recording's first frames are not lost: the replay starts after
            // the event that says the link is up has been handled (the machine has its handshake by then). The
            // link starts before this service, and a link that is up at once (stdout) is up already.
            let loop = self.loop
            inputs.onLinkUp = { [weak self] in
                loop.execute {
                    guard let inputs = self?.coordinator, !inputs.isReplaying else { return }
                    inputs.startReplay(recording)
                }
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
        // A calibration being saved when the run ends is finished, not lost (the loop no longer runs).
        let deadline = Instant(nanoseconds: MonotonicClock.nanoseconds()).advanced(by: .seconds(5))
        for save in savesInFlight where !save.finish(waitingUntil: deadline) {
            logger.error("calibrated, but saving it in \(config.file ?? "the config file") did not finish within 5 s")
        }
        savesInFlight = []
        guard let coordinator else { return }
        coordinator.stop()
        bridge.events.unsubscribe(coordinator)
    }

    /// `carbridge calibrate`'s gesture during a run: the roll's neutral and, with a tilt throttle, the
    /// pitch's are saved in the config file, as `carbridge calibrate` saves them. The file is written and
    /// synced on a helper thread (`EventLoop.offload`): the car keeps being driven meanwhile.
    private func calibrated(_ neutrals: TiltNeutrals) {
        let values = neutrals.configValues
        guard let file = config.file else {
            for (key, degrees) in values {
                logger.notice("calibrated: [\(key.table)] \(key.name) = \(ConfigFileEditor.roundedNeutral(degrees)) (no config file to save it in; use --config)")
            }
            return
        }
        let logger = self.logger
        savesInFlight.removeAll { $0.isComplete }
        savesInFlight.append(bridge.loop.offload({ () -> [(level: Logger.Level, line: String)] in
            values.map { key, degrees in
                let setting = "[\(key.table)] \(key.name) = \(ConfigFileEditor.roundedNeutral(degrees))"
                do {
                    try ConfigFileEditor.saveNeutral(degrees, file: file, resolver: EventCodeNames(), key: key)
                    return (.notice, "calibrated: \(setting), saved in \(file)")
                } catch {
                    return (.error, "calibrated (\(setting)) but could not save it in \(file): \(error)")
                }
            }
        }, then: { outcomes in
            for outcome in outcomes { logger.log(level: outcome.level, "\(outcome.line)") }
        }))
    }
}
