import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveSystem
import Logging

/// Finds, opens and watches the input devices the config picks (udev hotplug, `EACCES` retried), or
/// replays an evemu recording, and reports their frames, their loss and their return. It maps nothing:
/// its frames go to whoever listens (`InputMapping`, through `InputCoordinator`).
///
/// A pad with a GameControllerDB layout is opened as a `TranslatedPadSource`, so its frames carry the
/// standard codes from the start. Loss: a device removed, a read error, or an accelerometer that gives no
/// usable sample for `input_timeout_ms` (zero or non-finite gravity vectors are not samples) is reported
/// through `onLost` at once; once every lost role is back (an accelerometer: delivering samples again),
/// `onRestored`.
final class InputDeviceManager {
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

    /// Every frame, with the role it is used as and the device's name (a pad's in its standard layout).
    var onFrame: ((InputFrame, DeviceRole, String) -> Void)?
    /// Every frame as the device gave it, before a pad's translation, its axes showing the values the mapping
    /// uses (for `carbridge monitor`; set before devices open).
    var onDeviceFrame: ((InputFrame, DeviceRole, String) -> Void)?
    /// A device of `role` was lost (the car must stop).
    var onLost: ((DeviceRole) -> Void)?
    /// Every lost role is back: driving may resume.
    var onRestored: (() -> Void)?
    /// A device was opened or closed.
    var onDeviceChange: ((InputDeviceChange) -> Void)?
    /// A pad was opened with this layout (its name as `onFrame` gives it), for `carbridge monitor`.
    var onLayout: ((String, PadLayout) -> Void)?
    /// The replay reached its end (the role it replayed).
    var onReplayFinished: ((DeviceRole) -> Void)?

    private let config: CarbridgeConfig
    private let loop: EventLoop
    private let logger: Logger
    private let picker: DevicePicker
    /// Chooses each pad's layout (the `[buttons]` table, the GameControllerDBs, the kernel's codes).
    private let layouts: PadLayoutResolver
    /// Whether an accelerometer's frame is a sample the tilt can use (for the watchdog).
    private let isUsableSample: (InputFrame) -> Bool
    private var watcher: UdevWatcher?
    private var known: [String: InputDeviceDescriptor] = [:]
    private var knownOrder: [String] = []
    private var active: [String: Active] = [:]
    private var watchdog: SampleWatchdog
    /// Follows `watchdog.deadline`.
    private let watchdogTimer: DeadlineTimer
    /// Roles whose device was lost and is not back yet.
    private var missingRoles: Set<DeviceRole> = []
    private var replay: EvemuPlayer?
    /// The replay as the mapping hears it (its pad translation when it has a layout).
    private var replaySource: (any InputSource)?
    /// Sources handed in with `attach`.
    private var attached: [any InputSource] = []
    /// Pads that were already told they have no layout (the notice is shown once per pad, not per replug).
    private var noticed: Set<String> = []
    /// HID devices waiting for a driver to take them, and the timer of the first one's grace.
    private var unboundHid = UnboundHidDevices()
    private let hidTimer: DeadlineTimer

    /// A manager for the devices `config` picks; `environment` is where SDL's `SDL_GAMECONTROLLERCONFIG`
    /// variables are looked up. Throws a `CarbridgeError` when `[devices] mapping_db` cannot be read.
    init(
        config: CarbridgeConfig, loop: EventLoop, logger: Logger, isUsableSample: @escaping (InputFrame) -> Bool,
        environment: @escaping (String) -> String?
    ) throws {
        self.layouts = try PadLayoutResolver(config: config, environment: environment)
        self.config = config
        self.loop = loop
        self.logger = logger
        self.picker = DevicePicker(config: config)
        self.isUsableSample = isUsableSample
        self.watchdog = SampleWatchdog(timeout: .milliseconds(config.steering.inputTimeoutMilliseconds))
        watchdogTimer = DeadlineTimer(loop: loop)
        hidTimer = DeadlineTimer(loop: loop)
        watchdogTimer.setAction { [unowned self] in self.watchdogFired() }
    }

    /// Every callback the manager hands out (to its timer, its udev watcher, its replay, its sources and their
    /// retries) captures it `unowned`: `stop()`, here at the latest, makes sure that none runs once it is gone.
    deinit {
        stop()
    }

    /// True once a replay was started.
    var isReplaying: Bool { replay != nil }

    /// Enumerates devices and watches udev for more; devices appearing later are picked up.
    func startWatching() throws {
        let watcher = try UdevWatcher(loop: loop)
        watcher.onAppeared = { [unowned self] device in self.appeared(device) }
        watcher.onDisappeared = { [unowned self] syspath in self.disappeared(syspath, reason: "removed") }
        watcher.onHidEvent = { [unowned self] event in
            self.unboundHid.handle(event, at: self.loop.now())
            self.hidTimer.arm(at: self.unboundHid.nextDeadline)
        }
        hidTimer.setAction { [unowned self] in self.reportUnboundHid() }
        self.watcher = watcher
        _ = try watcher.start()
        if active.isEmpty {
            let wanted = picker.entries.compactMap { entry in entry.match.map { "\(entry.key) = \($0)" } }
            logger.notice("waiting for an input device (\(wanted.joined(separator: ", "))); plug one in or pair it")
        }
    }

    /// Replays an evemu recording instead of live devices, with its timing.
    func startReplay(_ recording: EvemuRecording) {
        let role: DeviceRole = DeviceClassifier.isBalanceBoard(name: recording.info.name)
            ? .board : recording.info.isAccelerometer ? .accelerometer : .gamepad
        let player = EvemuPlayer(recording: recording, loop: loop, axisShapes: role == .gamepad ? config.gamepadAxisShapes : [:])
        let name = player.description
        // The same translation as a device udev found (`translated`): one pad translation path.
        let resolution = role == .gamepad ? layouts.resolve(recording.info) : nil
        var source: any InputSource = player
        if let resolution, let translator = Self.translator(for: resolution, info: recording.info) {
            source = translated(player, through: translator, role: role, name: name)
        }
        let reportsDeviceFrames = !(source is TranslatedPadSource)
        source.onFrame = { [unowned self] frame in
            self.received(frame, role: role, source: name, deviceFrame: reportsDeviceFrames)
        }
        player.onFinished = { [unowned self] in
            self.logger.notice("replay finished")
            self.onReplayFinished?(role)
        }
        replay = player
        replaySource = source
        onDeviceChange?(InputDeviceChange(key: "replay", description: name, opened: true))
        if let resolution { announce(resolution, of: recording.info, source: name) }
        player.start(at: nil)
    }

    /// Uses `source`, already open, as the device of `role` (e.g. a `RawEvdevReader` on a pipe; the
    /// benchmarks drive the live path through it): its frames are reported like those of a device udev
    /// found, and its loss is lost input. With `info` (what the device says about itself), a pad gets its
    /// layout as a udev-found one does. `stop()` stops it.
    func attach(_ source: any InputSource, role: DeviceRole, name: String, info: InputDeviceInfo? = nil) throws {
        let key = "attached:\(name)"
        var source = source
        let resolution = role == .gamepad ? info.map { layouts.resolve($0) } : nil
        if let resolution, let info, let translator = Self.translator(for: resolution, info: info) {
            source = translated(source, through: translator, role: role, name: name)
        }
        let reportsDeviceFrames = !(source is TranslatedPadSource)
        source.onFrame = { [unowned self] frame in
            self.received(frame, role: role, source: name, deviceFrame: reportsDeviceFrames)
        }
        source.onGone = { [unowned self] reason in
            self.logger.warning("\(role.rawValue) \"\(name)\" lost: \(reason)")
            self.onDeviceChange?(InputDeviceChange(key: key, description: Self.describe(role, name), opened: false))
            self.lost(role)
        }
        attached.append(source)
        try source.start()
        onDeviceChange?(InputDeviceChange(key: key, description: Self.describe(role, name), opened: true))
        if let resolution, let info { announce(resolution, of: info, source: name) }
        // As a device udev opened: a pad or board attached for a lost role is that role back (an
        // accelerometer is back with its first usable sample).
        if role != .accelerometer { restored(role) }
    }

    /// Closes every device; none of them calls back after this.
    func stop() {
        for source in attached { Self.release(source) }
        attached.removeAll()
        watcher?.stop()
        watcher?.onAppeared = nil
        watcher?.onDisappeared = nil
        watcher?.onHidEvent = nil
        hidTimer.cancel()
        replay?.stop()
        replaySource?.onFrame = nil
        replay?.onFinished = nil
        for syspath in Array(active.keys) { close(syspath) }
        watchdogTimer.cancel()
    }

    /// Stops `source` and takes its callbacks back.
    private static func release(_ source: any InputSource) {
        source.stop()
        source.onFrame = nil
        source.onGone = nil
        (source as? TranslatedPadSource)?.onUntranslatedFrame = nil
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
            if active[device.syspath] != nil { continue }
            if let current = active.first(where: { $0.value.key == entry.key }) {
                guard DevicePicker.followsThePad(entry), isOwnSensorOfTheOpenPad(device) else { continue }
                // The pad's own motion sensors appeared after another accelerometer was taken (hid-playstation
                // makes them just after the pad): the pad's own steer. Not a loss: the car keeps going, and the
                // watchdog still stops it if the new sensor never delivers.
                logger.notice("accelerometer: \"\(current.value.descriptor.name)\" gives way to the pad's own \"\(device.name)\"")
                close(current.key)
                onDeviceChange?(InputDeviceChange(
                    key: current.key, description: Self.describe(.accelerometer, current.value.descriptor.name), opened: false))
            }
            open(device, role: entry.role, key: entry.key)
        }
    }

    /// True when `device` is the motion-sensor node of the gamepad now in use.
    private func isOwnSensorOfTheOpenPad(_ device: InputDeviceDescriptor) -> Bool {
        guard let pad = active.values.first(where: { $0.role == .gamepad })?.descriptor else { return false }
        return device.deviceClass == .accelerometer && device.isSibling(of: pad)
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
        let axisShapes = role == .gamepad ? config.gamepadAxisShapes : [:]
        let udevMountMatrix = device.udevMountMatrix
        active[syspath] = Active(descriptor: device, role: role, key: key, state: .opening(nil))
        let retry = PermissionRetry<any InputSource>(
            loop: loop,
            attempt: {
                let evdev = try EvdevDevice(path: node, loop: loop, grab: grab, axisShapes: axisShapes)
                guard evdev.info.isAccelerometer else { return evdev }
                return AccelerometerSource(evdev: evdev, udevMountMatrix: udevMountMatrix)
            },
            completion: { [unowned self] result in
                guard let current = self.active[syspath] else { return }
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

    /// Makes `source` the open device of `entry` and starts it; one that cannot start is dropped. A pad with
    /// a DB layout is wrapped in a `TranslatedPadSource` first.
    private func activate(_ source: any InputSource, as entry: Active, location: String) {
        let syspath = entry.descriptor.syspath
        let role = entry.role
        let name = entry.descriptor.name
        var source = source
        let evdev = source as? EvdevDevice
        let resolution = role == .gamepad ? evdev.map { layouts.resolve($0.info) } : nil
        if let resolution, let evdev, let translator = Self.translator(for: resolution, info: evdev.info) {
            source = translated(evdev, through: translator, role: role, name: name)
        }
        let reportsDeviceFrames = !(source is TranslatedPadSource)
        source.onFrame = { [unowned self] frame in
            self.received(frame, role: role, source: name, deviceFrame: reportsDeviceFrames)
        }
        source.onGone = { [unowned self] reason in self.disappeared(syspath, reason: reason) }
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
        let node = entry.descriptor.devnode ?? entry.descriptor.sysfsDirectory ?? entry.descriptor.syspath
        logger.notice("\(role.rawValue): \"\(name)\" (\(node)) picked by \(entry.key)")
        onDeviceChange?(InputDeviceChange(
            key: syspath, description: Self.describe(role, name), gamepadNode: role == .gamepad ? evdev?.path : nil,
            opened: true))
        if let resolution, let evdev { announce(resolution, of: evdev.info, source: name) }
        if role == .gamepad, let evdev { primeAxes(of: evdev, through: source as? TranslatedPadSource, role: role, name: name) }
        if role == .accelerometer {
            // A new sensor starts with a clean slate: if it never delivers, it is reported lost.
            watchdog.opened(at: loop.now())
            armWatchdog()
        } else {
            restored(role)
        }
    }

    /// Maps a pad's axes as the kernel has them when it is opened. A stick that stays where it is sends no
    /// event, and a pad opened after another was lost would leave the lost pad's steering in force (a
    /// DualSense reports its centred stick before anyone opens it). Its keys are left out: a button held
    /// while the pad is plugged in is not a press.
    private func primeAxes(of evdev: EvdevDevice, through translator: TranslatedPadSource?, role: DeviceRole, name: String) {
        var frame = evdev.stateFrame()
        frame.keys = []
        guard let primed = translator.map({ $0.translate(frame) }) ?? frame, !primed.axes.isEmpty else { return }
        received(primed, role: role, source: name, deviceFrame: false)
    }

    /// Names each HID device no driver took within its grace: it makes no input node, so without this the
    /// driver would only see a pad that never drives. The kernel log says why, when this process may read it.
    private func reportUnboundHid() {
        for device in unboundHid.expired(at: loop.now()) where UnboundHidDevices.isStillUnbound(device) {
            KernelLog.read(containing: device.sysname, loop: loop) { [logger] said in
                let why: String
                if let said, !said.isEmpty {
                    why = "the kernel said: " + said.joined(separator: "; ")
                } else {
                    why = "its driver refused it or is not loaded; `dmesg | grep \(device.sysname)` says why"
                }
                logger.warning("no kernel driver took \(device.summary) at \(device.syspath): it makes no input device; \(why)")
            }
        }
        hidTimer.arm(at: unboundHid.nextDeadline)
    }

    /// `role` is back; when nothing is missing any more, motion may be asked for again.
    private func restored(_ role: DeviceRole) {
        guard !missingRoles.isEmpty, missingRoles.remove(role) != nil, missingRoles.isEmpty else { return }
        logger.notice("\(role.rawValue) back: \(Self.resumeRule(for: role, config: config))")
        onRestored?()
    }

    /// What it takes to drive again once `role` is back (docs/input.md, "Hands-free driving"): a device that
    /// arms hands-free driving counts its still hold again from the start; an analog throttle must first be
    /// back at rest.
    static func resumeRule(for role: DeviceRole, config: CarbridgeConfig) -> String {
        let handsFree = config.handsFreeSettings
        let arms = handsFree?.arming != nil
            && (role == .board ? config.usesBoard : role == .accelerometer && config.throttle.source == .tilt)
        if arms {
            let seconds = CFormat.double("%g", config.handsfree.armAfterSeconds)
            let stillness = role == .board ? "stand still on it" : "hold it level"
            return "driving resumes only after a new arming: \(stillness) for arm_after_s (\(seconds) s), "
                + "as at the start"
        }
        if handsFree?.throttle != nil || !config.throttle.axis.isEmpty {
            return "driving may resume once the throttle has been back at rest (the car moves when the driver acts)"
        }
        return "driving may resume (the car moves when the driver acts)"
    }

    private func disappeared(_ syspath: String, reason: String) {
        known[syspath] = nil
        knownOrder.removeAll { $0 == syspath }
        guard let entry = active[syspath] else { return }
        close(syspath)
        logger.warning("\(entry.role.rawValue) \"\(entry.descriptor.name)\" lost: \(reason)")
        onDeviceChange?(InputDeviceChange(
            key: syspath, description: Self.describe(entry.role, entry.descriptor.name),
            gamepadNode: entry.role == .gamepad ? entry.descriptor.devnode : nil, opened: false))
        lost(entry.role)
        assign()
    }

    private func close(_ syspath: String) {
        guard let entry = active.removeValue(forKey: syspath) else { return }
        switch entry.state {
        case .opening(let retry): retry?.cancel()
        case .open(let source): Self.release(source)
        }
        if entry.role == .accelerometer {
            watchdog.closed()
            armWatchdog()
        }
    }

    private func lost(_ role: DeviceRole) {
        missingRoles.insert(role)
        onLost?(role)
    }

    // MARK: frames and layouts

    /// `source` translated through `translator`, its untranslated frames reported to `onDeviceFrame`.
    private func translated(
        _ source: any InputSource, through translator: PadTranslator, role: DeviceRole, name: String
    ) -> TranslatedPadSource {
        let pad = TranslatedPadSource(source, translator: translator)
        // Only for a listener (the monitor): the run maps the translated frames and builds nothing more per report.
        if onDeviceFrame != nil {
            pad.onUntranslatedFrame = { [unowned self] frame in self.onDeviceFrame?(frame, role, name) }
        }
        return pad
    }

    /// A frame to map; with `deviceFrame`, it is also the frame as the device gave it (nothing translated it).
    private func received(_ frame: InputFrame, role: DeviceRole, source: String, deviceFrame: Bool = true) {
        if deviceFrame { onDeviceFrame?(frame, role, source) }
        if role == .accelerometer, isUsableSample(frame) {
            if watchdog.sample(at: loop.now()) { logger.notice("accelerometer \(source) delivers samples again") }
            armWatchdog()
            restored(.accelerometer)
        }
        onFrame?(frame, role, source)
    }

    /// The translator of a pad whose layout comes from a DB entry; nil for any other layout.
    private static func translator(for resolution: PadLayoutResolver.Resolution, info: InputDeviceInfo) -> PadTranslator? {
        guard case .database = resolution.layout.origin else { return nil }
        return PadTranslator(layout: resolution.layout, absInfo: info.axes)
    }

    /// Says which layout the pad got (the log, `onLayout`), and the DB's problems.
    private func announce(_ resolution: PadLayoutResolver.Resolution, of info: InputDeviceInfo, source: String) {
        for problem in resolution.problems { logger.warning("GameControllerDB: \(problem) (line ignored)") }
        let layout = resolution.layout
        if case .database(let name, let db, let line) = layout.origin {
            logger.notice("gamepad \"\(info.name)\": standard layout from \(db) line \(line) (\"\(name)\")")
            if !layout.missing.isEmpty {
                logger.warning("gamepad \"\(info.name)\" lacks inputs its DB line names: \(layout.missing.joined(separator: ", "))")
            }
        }
        if let notice = resolution.notice, noticed.insert("\(info.vendorProduct) \(info.name)").inserted {
            logger.notice("\(notice)")
        }
        onLayout?(source, layout)
    }

    /// An accelerometer that gives no usable sample for `input_timeout_ms` is lost input (spec §6):
    /// the timer follows `watchdog.deadline`.
    private func armWatchdog() {
        watchdogTimer.arm(at: watchdog.deadline)
    }

    private func watchdogFired() {
        guard watchdog.expire(at: loop.now()) else { return armWatchdog() }
        logger.warning("accelerometer silent for \(config.steering.inputTimeoutMilliseconds) ms: input lost")
        lost(.accelerometer)
    }

    private static func describe(_ role: DeviceRole, _ name: String) -> String { "\(role.rawValue) \"\(name)\"" }
}
