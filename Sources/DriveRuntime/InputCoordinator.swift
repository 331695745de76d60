import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveSystem
import Logging

/// The run's inputs, devices to controls: an `InputDeviceManager` (which devices, opened and watched, their
/// layouts) feeding an `InputMapping` (frames to controls). Safety: a device that steers or holds mapped
/// buttons going away is `.inputLost` at once (its held buttons released first); once every lost role is
/// back, `.inputRestored` lets the driver ask for motion again.
///
/// A subscriber of the run (it hands the drive state to the mapping); everything else it only produces.
public final class InputCoordinator: RunSubscriber {
    private let devices: InputDeviceManager
    private let mapping: InputMapping

    /// Every control the inputs produce.
    public var onControl: ((Control) -> Void)? {
        get { mapping.onControl }
        set { mapping.onControl = newValue }
    }
    /// A device was opened or closed.
    public var onDeviceChange: ((InputDeviceChange) -> Void)?
    /// Every frame as the device gave it (before a pad's translation to its standard layout), with its role
    /// and device name (for `carbridge monitor`).
    public var onFrame: ((InputFrame, DeviceRole, String) -> Void)? {
        get { devices.onDeviceFrame }
        set { devices.onDeviceFrame = newValue }
    }
    /// The calibrate action fired: the new tilt neutrals.
    public var onCalibrate: ((TiltNeutrals) -> Void)? {
        get { mapping.onCalibrate }
        set { mapping.onCalibrate = newValue }
    }
    /// The hands-free rider's reading after each frame and tick (only when something is hands-free).
    public var onHandsFree: ((HandsFreeReading) -> Void)? {
        get { mapping.onHandsFree }
        set { mapping.onHandsFree = newValue }
    }
    /// The replay reached its end (after its lost-input stop).
    public var onReplayFinished: (() -> Void)?
    /// A pad was opened with this layout (its name as `onFrame` gives it), for `carbridge monitor`.
    public var onLayout: ((String, PadLayout) -> Void)? {
        get { devices.onLayout }
        set { devices.onLayout = newValue }
    }

    /// Inputs for the devices and the mapping `config` sets; `environment` is where SDL's
    /// `SDL_GAMECONTROLLERCONFIG` variables are looked up (the process's by default). Throws a
    /// `CarbridgeError` when `[devices] mapping_db` cannot be read.
    public init(
        config: CarbridgeConfig, loop: EventLoop, logger: Logger,
        environment: @escaping (String) -> String? = PadLayoutResolver.processEnvironment
    ) throws {
        let settings = config.mapperSettings
        let mapping = InputMapping(settings: settings, loop: loop)
        self.mapping = mapping
        let tilt = settings.tilt.map { TiltMapper(settings: $0) }
        devices = try InputDeviceManager(
            config: config, loop: loop, logger: logger,
            isUsableSample: { ControlMapper.isUsableTiltSample($0, tilt: tilt) }, environment: environment)
        devices.onFrame = { frame, role, _ in mapping.map(frame, role: role) }
        devices.onLost = { [weak self] role in
            guard let self else { return }
            self.mapping.deviceLost(role: role)
            self.mapping.onControl?(.inputLost)
        }
        devices.onRestored = { [weak self] in self?.mapping.onControl?(.inputRestored) }
        devices.onDeviceChange = { [weak self] change in self?.onDeviceChange?(change) }
        devices.onReplayFinished = { [weak self] role in
            guard let self else { return }
            self.mapping.deviceLost(role: role)
            self.onReplayFinished?()
        }
    }

    /// True once a replay was started.
    public var isReplaying: Bool { devices.isReplaying }

    /// Enumerates devices and watches udev for more; devices appearing later are picked up.
    public func startWatching() throws { try devices.startWatching() }

    /// Replays an evemu recording instead of live devices, with its timing.
    public func startReplay(_ recording: EvemuRecording) { devices.startReplay(recording) }

    /// Uses `source`, already open, as the device of `role` (see `InputDeviceManager.attach`).
    public func attach(_ source: any InputSource, role: DeviceRole, name: String, info: InputDeviceInfo? = nil) throws {
        try devices.attach(source, role: role, name: name, info: info)
    }

    /// Closes every device.
    public func stop() {
        devices.stop()
        mapping.stop()
    }

    /// Called when the run's events say the link came up (`RunEvent.link(.up)`, the one link-up channel).
    public var onLinkUp: (() -> Void)?

    public func receive(_ event: RunEvent) {
        if case .link(.up) = event { onLinkUp?() }
        mapping.receive(event)
    }
}
