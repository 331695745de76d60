import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import DriveSystem
import Logging

/// Finds, opens and watches the input devices the config picks (udev hotplug), or replays an
/// evemu recording, and turns their frames into controls through one `ControlMapper`.
///
/// Safety: a device that steers or holds mapped buttons going away (removal, read error, or an
/// accelerometer silent for `input_timeout_ms` — zero or non-finite gravity vectors are not samples)
/// is reported as `.inputLost` at once; a device that comes back is opened again without a restart,
/// and once every lost role is back (an accelerometer: delivering samples again) `.inputRestored`
/// lets the driver ask for motion again.
public final class InputCoordinator {
    /// One device in use.
    private struct Active {
        enum State {
            /// An evdev node being opened, `EACCES` retried (nil while the first attempt runs).
            case opening(PermissionRetry<any InputSource>?)
            /// Delivering frames.
            case open(any InputSource)
        }

        let descriptor: InputDeviceDescriptor
        let role: DeviceRole
        let key: String
        var state: State
    }

    private let config: CarbridgeConfig
    private let loop: EventLoop
    private let logger: Logger
    private let picker: DevicePicker
    private var mapper: ControlMapper
    /// Follows `mapper.nextDeadline`. A `let` (a `var` is retained and released around every `arm`, and this
    /// one is re-armed after every frame; a lazy one is also checked for exclusive access at every use).
    private let mapperTimer: DeadlineTimer
    /// The mapper's output for one frame, reused so a frame allocates nothing (see `takeScratch`).
    private var scratch: [MappedEvent] = []
    private var watcher: UdevWatcher?
    private var known: [String: InputDeviceDescriptor] = [:]
    private var knownOrder: [String] = []
    private var active: [String: Active] = [:]
    /// Follows `watchdog.deadline`.
    private var watchdogTimer: DeadlineTimer!
    private var watchdog: SampleWatchdog
    /// Roles whose device was lost and is not back yet.
    private var missingRoles: Set<DeviceRole> = []
    private var replay: EvemuPlayer?
    /// Sources handed in with `attach`.
    private var attached: [any InputSource] = []
    /// What the callbacks that may outlive the coordinator (udev, a replay, an `EACCES` retry, a rumble motor
    /// opened on another thread) hold weakly instead of the coordinator, which is retained and released four
    /// times per input report: with a weak reference to it, each of those took the runtime's slow path
    /// (about 400 instructions per report). Set at the end of `init`.
    private var lifeline: Lifeline<InputCoordinator>!
    private let inputTimeout: Duration
    /// Chooses each pad's layout (the `[buttons]` table, the GameControllerDBs, the kernel's codes).
    private let layouts: PadLayoutResolver
    /// The translator of each pad with a DB layout, by its syspath (or the name it was attached with).
    private var translators: [String: PadTranslator] = [:]
    /// The rumble motors of the open pads that have them, by syspath.
    private var motors: [String: RumbleMotor] = [:]
    /// The pads whose motors a thread is opening (uploading), by syspath: which opening it is, so that a
    /// motor arriving after its pad was closed (or closed and opened again) is closed, not used.
    private var motorOpenings: [String: UInt64] = [:]
    private var motorOpeningCount: UInt64 = 0
    /// Pads that were already told they have no layout (the notice is shown once per pad, not per replug).
    private var noticed: Set<String> = []

    /// Every control the inputs produce.
    public var onControl: ((Control) -> Void)?
    /// A device was opened (`true`) or closed (`false`), with a description for the view.
    public var onDeviceChange: ((String, Bool) -> Void)?
    /// Every normalised frame, with the role it was mapped as (for `carbridge monitor`).
    public var onFrame: ((InputFrame, DeviceRole, String) -> Void)?
    /// The calibrate action fired: the new tilt neutrals (the roll's and a tilt throttle's pitch's).
    public var onCalibrate: ((TiltNeutrals) -> Void)?
    /// The replay reached its end.
    public var onReplayFinished: (() -> Void)?
    /// A pad was opened with this layout (its source name as `onFrame` gives it), for `carbridge monitor`.
    public var onLayout: ((String, PadLayout) -> Void)?
    /// The hands-free rider's reading after each frame and tick (only when something is hands-free).
    public var onHandsFree: ((HandsFreeReading) -> Void)?
    /// The drive machine's current state (the bridge's): hands-free driving works out its controls against it.
    public var driveState: (() -> DriveState)?

    /// Prepares the coordinator with the mapper settings of `config` (resolved when it was loaded);
    /// `environment` is where SDL's `SDL_GAMECONTROLLERCONFIG` variables are looked up (the process's by
    /// default). Throws a `CarbridgeError` when `[devices] mapping_db` cannot be read.
    public init(
        config: CarbridgeConfig, loop: EventLoop, logger: Logger,
        environment: @escaping (String) -> String? = PadLayoutResolver.processEnvironment
    ) throws {
        self.layouts = try PadLayoutResolver(config: config, environment: environment)
        self.config = config
        self.loop = loop
        self.logger = logger
        self.picker = DevicePicker(config: config)
        self.mapper = ControlMapper(settings: config.mapperSettings)
        self.inputTimeout = .milliseconds(config.steering.inputTimeoutMilliseconds)
        self.watchdog = SampleWatchdog(timeout: inputTimeout)
        mapperTimer = DeadlineTimer(loop: loop)
        // The timers are the coordinator's own and are cancelled when they go with it: unowned.
        watchdogTimer = DeadlineTimer(loop: loop) { [unowned self] in self.watchdogFired() }
        lifeline = Lifeline(self)
        mapperTimer.setAction { [unowned self] in
            var events = self.takeScratch()
            self.refreshDriveState()
            self.mapper.tick(at: self.loop.now(), into: &events)
            self.deliver(&events)
            self.reportHandsFree()
        }
    }

    /// The devices in use, in words.
    public var activeDescriptions: [String] {
        active.values.sorted { $0.key < $1.key }.map { "\($0.role.rawValue) \"\($0.descriptor.name)\"" }
    }

    /// True once a replay was started.
    public var isReplaying: Bool { replay != nil }

    deinit {
        // The sources' frame closures hold the coordinator unowned: take them back, so that a source someone
        // else still holds can never call into a coordinator that is gone.
        for source in attached { source.onFrame = nil }
        for entry in active.values {
            if case .open(let source) = entry.state { source.onFrame = nil }
        }
        replay?.onFrame = nil
    }

    /// Enumerates devices and watches udev for more; devices appearing later are picked up.
    public func startWatching() throws {
        let watcher = try UdevWatcher(loop: loop)
        watcher.onAppeared = { [weak lifeline] device in lifeline?.owner.appeared(device) }
        watcher.onDisappeared = { [weak lifeline] syspath in lifeline?.owner.disappeared(syspath, reason: "removed") }
        self.watcher = watcher
        _ = try watcher.start()
        if active.isEmpty {
            let wanted = picker.entries.compactMap { entry in entry.match.map { "\(entry.key) = \($0)" } }
            logger.notice("waiting for an input device (\(wanted.joined(separator: ", "))); plug one in or pair it")
        }
    }

    /// Replays an evemu recording instead of live devices, with its timing.
    public func startReplay(_ recording: EvemuRecording) {
        let role: DeviceRole = DeviceClassifier.isBalanceBoard(name: recording.info.name)
            ? .board : recording.info.isAccelerometer ? .accelerometer : .gamepad
        let player = EvemuPlayer(recording: recording, loop: loop)
        let name = "replay \"\(recording.info.name)\""
        player.onFrame = { [weak lifeline] frame in lifeline?.owner.frame(frame, role: role, source: name, key: "replay") }
        player.onFinished = { [weak lifeline] in
            guard let self = lifeline?.owner else { return }
            self.logger.notice("replay finished")
            self.deliver(self.mapper.deviceLost(role: role))
            self.onReplayFinished?()
        }
        replay = player
        onDeviceChange?(name, true)
        if role == .gamepad { useLayout(for: recording.info, key: "replay", source: name) }
        player.start()
    }

    /// Uses `source`, already open, as the device of `role` (e.g. a `RawEvdevReader` on a pipe; the
    /// benchmarks drive the live path through it): its frames are mapped like those of a device udev
    /// found, and its loss is lost input. `stop()` stops it.
    /// With `info` (what the device says about itself), a pad gets its layout as a udev-found one does.
    public func attach(_ source: any InputSource, role: DeviceRole, name: String, info: InputDeviceInfo? = nil) throws {
        let key = "attached:\(name)"
        source.onFrame = { [unowned self] frame in self.frame(frame, role: role, source: name, key: key) }
        source.onGone = { [weak lifeline] reason in
            guard let self = lifeline?.owner else { return }
            self.logger.warning("\(role.rawValue) \"\(name)\" lost: \(reason)")
            self.onDeviceChange?("\(role.rawValue) \"\(name)\"", false)
            self.inputLost(role: role)
        }
        attached.append(source)
        try source.start()
        onDeviceChange?("\(role.rawValue) \"\(name)\"", true)
        if role == .gamepad, let info { useLayout(for: info, key: key, source: name) }
    }

    /// Closes every device.
    public func stop() {
        for source in attached { source.stop() }
        attached.removeAll()
        watcher?.stop()
        replay?.stop()
        for syspath in Array(active.keys) { close(syspath) }
        watchdogTimer.cancel()
        mapperTimer.cancel()
    }

    // MARK: devices

    private func appeared(_ device: InputDeviceDescriptor) {
        if known[device.syspath] == nil { knownOrder.append(device.syspath) }
        known[device.syspath] = device
        assign()
    }

    /// Opens whatever the config picks that is not open yet.
    private func assign() {
        let devices = knownOrder.compactMap { known[$0] }
        for (entry, device) in picker.assignments(among: devices) {
            if active.values.contains(where: { $0.key == entry.key }) { continue }
            if active[device.syspath] != nil { continue }
            open(device, role: entry.role, key: entry.key)
        }
    }

    private func open(_ device: InputDeviceDescriptor, role: DeviceRole, key: String) {
        let syspath = device.syspath
        if device.deviceClass == .iioAccelerometer, let directory = device.sysfsDirectory {
            let source: AccelerometerSource
            do {
                source = try AccelerometerSource(descriptor: device, loop: loop, rateHertz: config.steering.sampleRateHertz)
            } catch {
                logger.error("cannot read \(device.name) (\(directory)): \(error)")
                return
            }
            if let error = source.mountMatrixError {
                logger.warning("ignoring the mount matrix of \(device.name): \(error)")
            }
            activate(source, as: Active(descriptor: device, role: role, key: key, state: .open(source)), location: directory)
            return
        }
        guard let node = device.devnode else { return }
        let loop = self.loop
        let grab = config.devices.grab && role == .gamepad
        let udevMountMatrix = device.udevMountMatrix
        active[syspath] = Active(descriptor: device, role: role, key: key, state: .opening(nil))
        let retry = PermissionRetry<any InputSource>(
            loop: loop,
            attempt: {
                let evdev = try EvdevDevice(path: node, loop: loop, grab: grab)
                guard evdev.info.isAccelerometer else { return evdev }
                return AccelerometerSource(evdev: evdev, udevMountMatrix: udevMountMatrix)
            },
            completion: { [weak lifeline] result in
                guard let self = lifeline?.owner, let current = self.active[syspath] else { return }
                switch result {
                case .success(let source):
                    self.activate(source, as: current, location: node)
                case .failure(let error):
                    self.active[syspath] = nil
                    self.logger.error("cannot open \(device.name) (\(node)): \(error)")
                }
            })
        if case .opening = active[syspath]?.state { active[syspath]?.state = .opening(retry) }
    }

    /// Makes `source` the open device of `entry` and starts it; one that cannot start is dropped.
    private func activate(_ source: any InputSource, as entry: Active, location: String) {
        let syspath = entry.descriptor.syspath
        let role = entry.role
        let name = entry.descriptor.name
        // Unowned, not weak: a weak capture costs every report an exclusivity check and a weak load; `deinit`
        // takes the closures back from every source, so none outlives the coordinator.
        source.onFrame = { [unowned self] frame in self.frame(frame, role: role, source: name, key: syspath) }
        source.onGone = { [weak lifeline] reason in lifeline?.owner.disappeared(syspath, reason: reason) }
        var entry = entry
        entry.state = .open(source)
        active[syspath] = entry
        do {
            try source.start()
        } catch {
            logger.error("cannot read \(name) (\(location)): \(error)")
            active[syspath] = nil
            return
        }
        opened(entry)
        // Before any frame: the source delivers from the loop only, after this returns.
        if role == .gamepad, let evdev = source as? EvdevDevice {
            useLayout(for: evdev.info, key: syspath, source: name)
            openMotor(evdev.path, key: syspath)
        }
    }

    // MARK: rumble

    /// Opens the pad's rumble motors when `[feedback] rumble` is on and it has `FF_RUMBLE` (else nothing).
    /// The upload waits for the pad's driver, so it runs on a thread of its own and the motor joins
    /// `motors` when it is done; until then the pad drives without rumble.
    private func openMotor(_ path: String, key: String) {
        guard config.feedback.rumble, config.feedback.strength > 0 else { return }
        motorOpeningCount += 1
        let opening = motorOpeningCount
        motorOpenings[key] = opening
        let patterns = FeedbackEvent.allCases.map(\.pattern)
        RumbleMotor.open(path: path, patterns: patterns, strength: config.feedback.strength, loop: loop) { [weak lifeline] motor in
            guard let self = lifeline?.owner, self.motorOpenings[key] == opening else {
                motor?.closeInBackground()
                return
            }
            self.motorOpenings[key] = nil
            guard let motor else { return }
            self.motors[key] = motor
            self.logger.debug("rumble: \(path) has FF_RUMBLE")
        }
    }

    /// Plays `cue` on every open pad that has rumble motors (one `write` each, never blocking).
    public func rumble(_ cue: FeedbackEvent) {
        for motor in motors.values { motor.play(cue.rawValue) }
    }

    private func opened(_ entry: Active) {
        let node = entry.descriptor.devnode ?? entry.descriptor.sysfsDirectory ?? entry.descriptor.syspath
        logger.notice("\(entry.role.rawValue): \"\(entry.descriptor.name)\" (\(node)) picked by \(entry.key)")
        onDeviceChange?("\(entry.role.rawValue) \"\(entry.descriptor.name)\"", true)
        if entry.role == .accelerometer {
            // A new sensor starts with a clean slate: if it never delivers, it is reported lost.
            watchdog.opened(at: loop.now())
            armWatchdog()
        } else {
            restored(entry.role)
        }
    }

    /// `role` is back; when nothing is missing any more, motion may be asked for again.
    private func restored(_ role: DeviceRole) {
        guard !missingRoles.isEmpty, missingRoles.remove(role) != nil, missingRoles.isEmpty else { return }
        logger.notice("\(role.rawValue) back: driving may resume (the car moves when the driver acts)")
        onControl?(.inputRestored)
    }

    private func disappeared(_ syspath: String, reason: String) {
        known[syspath] = nil
        knownOrder.removeAll { $0 == syspath }
        guard let entry = active[syspath] else { return }
        close(syspath)
        logger.warning("\(entry.role.rawValue) \"\(entry.descriptor.name)\" lost: \(reason)")
        onDeviceChange?("\(entry.role.rawValue) \"\(entry.descriptor.name)\"", false)
        inputLost(role: entry.role)
        assign()
    }

    private func close(_ syspath: String) {
        translators[syspath] = nil
        motorOpenings[syspath] = nil
        if let motor = motors.removeValue(forKey: syspath) {
            // After the current event: a pad that went away has the car stopped before a thread is started.
            loop.execute { motor.closeInBackground() }
        }
        guard let entry = active.removeValue(forKey: syspath) else { return }
        switch entry.state {
        case .opening(let retry): retry?.cancel()
        case .open(let source): source.stop()
        }
        if entry.role == .accelerometer {
            watchdog.closed()
            armWatchdog()
        }
    }

    private func inputLost(role: DeviceRole) {
        missingRoles.insert(role)
        deliver(mapper.deviceLost(role: role))
        onControl?(.inputLost)
    }

    // MARK: layouts

    /// Chooses the pad's layout, says which, and keeps a translator when it has a DB entry.
    private func useLayout(for info: InputDeviceInfo, key: String, source: String) {
        let resolution = layouts.resolve(info)
        for problem in resolution.problems { logger.warning("GameControllerDB: \(problem) (line ignored)") }
        let layout = resolution.layout
        switch layout.origin {
        case .database(let name, let db, let line):
            logger.notice("gamepad \"\(info.name)\": standard layout from \(db) line \(line) (\"\(name)\")")
            if !layout.missing.isEmpty {
                logger.warning("gamepad \"\(info.name)\" lacks inputs its DB line names: \(layout.missing.joined(separator: ", "))")
            }
            translators[key] = PadTranslator(layout: layout, absInfo: info.axes)
        case .buttonsTable, .kernel:
            translators[key] = nil
        }
        if let notice = resolution.notice, noticed.insert("\(info.vendorProduct) \(info.name)").inserted {
            logger.notice("\(notice)")
        }
        onLayout?(source, layout)
    }

    // MARK: frames

    private func frame(_ frame: InputFrame, role: DeviceRole, source: String, key: String? = nil) {
        onFrame?(frame, role, source)
        // One lookup, none without translators (the key is hashed for every frame otherwise).
        if let key, !translators.isEmpty, let index = translators.index(forKey: key) {
            // A pad with a DB layout: the mapper sees the standard codes.
            guard let translated = translators.values[index].translate(frame) else { return }
            return mapped(translated, role: role, source: source)
        }
        mapped(frame, role: role, source: source)
    }

    private func mapped(_ frame: InputFrame, role: DeviceRole, source: String) {
        if role == .accelerometer, inspectMapper({ $0.isUsableTiltSample(frame) }) {
            if watchdog.sample(at: loop.now()) { noteSamplesAgain(from: source) }
            armWatchdog()
            restored(.accelerometer)
        }
        var events = takeScratch()
        refreshDriveState()
        mapper.handle(frame, role: role, into: &events)
        deliver(&events)
        if role == .accelerometer || role == .board { reportHandsFree() }
    }

    /// Out of line: inlined, the read of the logger's handler (a dynamic exclusivity check) was hoisted into
    /// every report's path.
    @inline(never)
    private func noteSamplesAgain(from source: String) {
        logger.notice("accelerometer \(source) delivers samples again")
    }

    private func reportHandsFree() {
        if let onHandsFree, let reading = inspectMapper({ $0.handsFreeReading }) { onHandsFree(reading) }
    }

    /// Hands the machine's current state to the mapper before it maps (hands-free controls depend on it).
    private func refreshDriveState() {
        if let driveState { mapper.driveState = driveState() }
    }

    /// The reusable event array, empty (taken out of `scratch`, so a control delivered from it that
    /// leads back here finds none and makes its own).
    private func takeScratch() -> [MappedEvent] {
        var events: [MappedEvent] = []
        swap(&events, &scratch)
        if events.capacity == 0 { events.reserveCapacity(8) }
        return events
    }

    private func deliver(_ events: [MappedEvent]) {
        var events = events
        deliver(&events)
    }

    /// Delivers `events`, then keeps the emptied array as the scratch for the next frame.
    private func deliver(_ events: inout [MappedEvent]) {
        for index in events.indices {
            switch events[index] {
            case .control(let control): onControl?(control)
            case .calibrate:
                if let neutrals = mapper.tiltNeutrals { onCalibrate?(neutrals) }
            }
        }
        events.removeAll(keepingCapacity: true)
        if events.capacity > scratch.capacity { swap(&events, &scratch) }
        rearmMapperTimer()
    }

    private func rearmMapperTimer() {
        mapperTimer.arm(at: inspectMapper { $0.nextDeadline })
    }

    /// Reads the mapper in place. A non-mutating call on the stored struct copies all of it first
    /// (every array and table in it retained, then released): two copies per tilt sample, about
    /// 1,200 instructions, before this.
    @inline(__always)
    private func inspectMapper<T>(_ body: (inout ControlMapper) -> T) -> T { body(&mapper) }

    /// An accelerometer that gives no usable sample for `input_timeout_ms` is lost input (spec §6):
    /// the timer follows `watchdog.deadline`.
    private func armWatchdog() {
        watchdogTimer.arm(at: watchdog.deadline)
    }

    private func watchdogFired() {
        guard watchdog.expire(at: loop.now()) else { return armWatchdog() }
        logger.warning("accelerometer silent for \(config.steering.inputTimeoutMilliseconds) ms: input lost")
        inputLost(role: .accelerometer)
    }
}
