import ArgumentParser
import DriveConfig
import DriveCore
import DriveInput
import DriveMapping
import DriveRuntime
import DriveSystem
import Foundation

/// `carbridge calibrate`: record the current tilt as straight ahead (`[steering] neutral_deg`).
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Record the accelerometer's current tilt as straight ahead and save it as [steering] neutral_deg.",
        discussion: """
            Hold the device (laptop, tablet, gamepad) the way that should mean "straight ahead" and keep \
            it still. calibrate opens the accelerometer the config picks ([devices] accelerometer: an IIO \
            accelerometer or an evdev one such as a DualSense/DS4 "Motion Sensors" node), averages the \
            gravity vector over --seconds, and computes the roll exactly as tilt steering does \
            (tilt_axes, axis flips, the device's mount matrix). With --config FILE the value is written \
            into FILE's [steering] table, keeping every other line and comment; without one it is printed \
            with how to set it. A button bound to "calibrate" does the same while driving.

            Examples:
              carbridge calibrate --config config/tilt-laptop.toml
              carbridge calibrate --config my.toml --seconds 2 --device "*Motion Sensors*"
              carbridge calibrate --device /sys/bus/iio/devices/iio:device0

            Exit status 0 when a neutral was found (and saved, with --config); 1 when there is no \
            accelerometer, it gives no samples, or the file cannot be written.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: ArgumentHelp("How long to average the gravity vector, 0.2…30 seconds.", valueName: "seconds"))
    var seconds: Double = 1

    @Option(name: .long, help: ArgumentHelp(
        "The accelerometer: a name glob, vendor:product, udev path, /dev/input/eventN node or IIO sysfs directory.",
        discussion: "Overrides [devices] accelerometer.", valueName: "device"))
    var device: String?

    func validate() throws {
        _ = try common.level()
        if !seconds.isFinite || !(0.2...30).contains(seconds) {
            throw ValidationError("--seconds: \(seconds) must be between 0.2 and 30")
        }
    }

    func run() throws {
        var config: CarbridgeConfig
        do { config = try common.loadConfig() } catch { throw reportFailure(error) }
        if let device { config.devices.accelerometer = DeviceMatch(parsing: device) }
        // Calibrate as tilt steering would map, whatever the config's steering source is now.
        config.steering.source = .tilt
        do {
            guard let tilt = config.mapperSettings.tilt else {
                throw CalibrationError(message: "tilt steering is not configured")
            }
            let loop = try EventLoop()
            let sampler = try openAccelerometer(config: config, loop: loop)
            say("calibrate: reading \(sampler.description) for \(seconds) s; hold it still in the straight-ahead position")
            let samples = try sampler.collect(for: .milliseconds(Int64((seconds * 1000).rounded())))
            guard !samples.isEmpty else {
                throw CalibrationError(message: "\(sampler.description) gave no samples in \(seconds) s; move it a little, "
                    + "check `carbridge monitor --tilt`, or try a longer --seconds")
            }
            let mapper = TiltMapper(settings: tilt)
            let count = Double(samples.count)
            let average = Vector3(
                x: samples.map(\.x).reduce(0, +) / count, y: samples.map(\.y).reduce(0, +) / count,
                z: samples.map(\.z).reduce(0, +) / count)
            guard let neutral = mapper.calibrateNeutral(from: average) else {
                throw CalibrationError(message: "the gravity vector over tilt_axes \"\(config.steering.tiltAxes)\" is zero; "
                    + "check tilt_axes (the axis pointing down at rest must be the second one)")
            }
            let rolls = samples.compactMap { mapper.rawRollDegrees($0) }
            if let low = rolls.min(), let high = rolls.max(), high - low > 5 {
                say("calibrate: warning: the roll varied by \(Int((high - low).rounded()))° while sampling; hold the device still and run it again")
            }
            let rounded = ConfigFileEditor.roundedNeutral(neutral)
            let magnitude = (average.x * average.x + average.y * average.y + average.z * average.z).squareRoot()
            say("calibrate: \(samples.count) samples, gravity \(String(format: "%.2f", magnitude)) m/s², roll \(rounded)°")
            try save(neutral)
        } catch {
            throw reportFailure(error)
        }
    }

    private func save(_ neutral: Double) throws {
        let rounded = ConfigFileEditor.roundedNeutral(neutral)
        guard let file = common.config else {
            say("neutral_deg = \(rounded)")
            say("not saved (no --config FILE): put `neutral_deg = \(rounded)` in the [steering] table of your config, "
                + "or run carbridge calibrate --config FILE")
            return
        }
        do {
            try ConfigFileEditor.saveNeutral(neutral, file: file, resolver: EventCodeNames())
        } catch {
            throw CalibrationError(message: "neutral_deg = \(rounded), but it could not be saved in \(file) (\(error)); "
                + "set it by hand in the [steering] table")
        }
        say("neutral_deg = \(rounded) saved in \(file) [steering]")
    }

    private func openAccelerometer(config: CarbridgeConfig, loop: EventLoop) throws -> AccelerometerSampler {
        if let device {
            if device.hasPrefix("/dev/") {
                return try AccelerometerSampler(evdevPath: device, mountMatrix: nil, loop: loop)
            }
            if FileManager.default.fileExists(atPath: device + "/in_accel_x_raw") {
                return try AccelerometerSampler(
                    iioDirectory: device, udevMountMatrix: nil, rateHertz: config.steering.sampleRateHertz, loop: loop)
            }
        }
        let devices = UdevWatcher.enumerate()
        let picked = DevicePicker(config: config).assignments(among: devices).first { $0.entry.role == .accelerometer }
        guard let descriptor = picked?.device else {
            let wanted = config.devices.accelerometer.configValue
            let found = devices.filter { $0.deviceClass == .accelerometer || $0.deviceClass == .iioAccelerometer }
            var message = "no accelerometer found for devices.accelerometer = \"\(wanted)\""
            if config.devices.accelerometer == .none {
                message += "; set [devices] accelerometer to \"auto\", a name glob or vendor:product, or pass --device"
            } else if found.isEmpty {
                message += ": udev lists \(devices.count) input device(s) and none is an accelerometer. "
                    + "A laptop needs its IIO accelerometer driver loaded (ls /sys/bus/iio/devices); a DualSense/DS4 "
                    + "must be connected (its \"Motion Sensors\" node). `carbridge devices` lists what carbridge sees"
            } else {
                message += "; accelerometers present: " + found.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    + " (pass one with --device or fix [devices] accelerometer)"
            }
            throw CalibrationError(message: message)
        }
        if descriptor.deviceClass == .iioAccelerometer, let directory = descriptor.sysfsDirectory {
            return try AccelerometerSampler(
                iioDirectory: directory, udevMountMatrix: descriptor.udevMountMatrix,
                rateHertz: config.steering.sampleRateHertz, loop: loop)
        }
        guard let node = descriptor.devnode else {
            throw CalibrationError(message: "\"\(descriptor.name)\" has no device node to read")
        }
        let matrix = try descriptor.udevMountMatrix.map { try MountMatrix.parse($0) }
        return try AccelerometerSampler(evdevPath: node, mountMatrix: matrix, loop: loop)
    }
}

/// A calibration problem the user can act on.
struct CalibrationError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Reads gravity samples (after the device's mount matrix) from an IIO or evdev accelerometer.
private final class AccelerometerSampler {
    let description: String
    private let loop: EventLoop
    private var iio: IIOAccelerometer?
    private var evdev: EvdevDevice?
    private var samples: [Vector3] = []
    private var failure: String?

    init(iioDirectory: String, udevMountMatrix: String?, rateHertz: Double, loop: EventLoop) throws {
        self.loop = loop
        let iio = try IIOAccelerometer(
            directory: iioDirectory, loop: loop, rateHertz: rateHertz, udevMountMatrix: udevMountMatrix)
        if let text = iio.mountMatrixText {
            let matrix = try MountMatrix.parse(text)
            iio.transform = { matrix.apply($0) }
        }
        description = "IIO accelerometer \"\(iio.name ?? "?")\" (\(iioDirectory))"
        self.iio = iio
        iio.onFrame = { [weak self] frame in if let a = frame.acceleration { self?.samples.append(a) } }
        iio.onGone = { [weak self] reason in self?.gone(reason) }
    }

    init(evdevPath: String, mountMatrix: MountMatrix?, loop: EventLoop) throws {
        self.loop = loop
        let evdev = try EvdevDevice(path: evdevPath, loop: loop)
        guard evdev.info.isAccelerometer else {
            throw CalibrationError(message: "\(evdevPath) (\"\(evdev.info.name)\") is not an accelerometer "
                + "(no INPUT_PROP_ACCELEROMETER); for a DualSense/DS4 use its \"Motion Sensors\" node")
        }
        description = "\"\(evdev.info.name)\" (\(evdevPath))"
        self.evdev = evdev
        func mounted(_ a: Vector3) -> Vector3 { mountMatrix?.apply(a) ?? a }
        if let a = evdev.stateFrame().acceleration, a != Vector3(x: 0, y: 0, z: 0) { samples.append(mounted(a)) }
        evdev.onFrame = { [weak self] frame in if let a = frame.acceleration { self?.samples.append(mounted(a)) } }
        evdev.onGone = { [weak self] reason in self?.gone(reason) }
    }

    private func gone(_ reason: String) {
        failure = reason
        loop.stop()
    }

    /// Samples for `window` and returns every sample; throws when the device goes away meanwhile.
    func collect(for window: Duration) throws -> [Vector3] {
        try evdev?.start()
        iio?.start()
        let deadline = loop.now().advanced(by: window)
        while loop.now() < deadline && failure == nil {
            try loop.run(until: deadline)
        }
        iio?.stop()
        evdev?.close()
        if let failure { throw CalibrationError(message: "\(description) went away while calibrating: \(failure)") }
        return samples
    }
}
