import DriveConfig
import DriveCore
import DriveInput
import DriveInputModel
import DriveMapping
import DriveSystem
import Glibc

/// `carbridge calibrate`'s job: open the accelerometer the config picks (or `device`), sample it on
/// `loop` for a window, average the gravity vector, compute the neutral exactly as tilt steering maps
/// (tilt_axes, flips, the mount matrix) and save it with `ConfigFileEditor.saveNeutral`.
///
/// Every line for the user goes to `output` (the command writes it to stdout); every failure is a
/// `CarbridgeError` (or a config/system error) the caller reports.
public final class CalibrationSession {
    /// What one sampling window gave.
    public struct Measurement: Equatable {
        /// The neutral roll in degrees (unrounded).
        public let neutral: Double
        /// The neutral as it is written to the config (`ConfigFileEditor.roundedNeutral`).
        public var rounded: Double { ConfigFileEditor.roundedNeutral(neutral) }
        public let sampleCount: Int
        /// The averaged gravity vector (after the mount matrix), m/s².
        public let average: Vector3
        /// Highest minus lowest roll while sampling, degrees.
        public let rollSpread: Double
        /// Whether the device moved too much (`rollSpread` > `maximumRollSpread`).
        public var moved: Bool { rollSpread > CalibrationSession.maximumRollSpread }
        /// The tilt throttle's neutral pitch in degrees (unrounded); nil unless `[throttle] source = "tilt"`.
        public var pitchNeutral: Double? = nil
    }

    /// Above this roll spread (degrees) the user is told to hold the device still and run it again.
    public static let maximumRollSpread = 5.0

    private var config: CarbridgeConfig
    private let device: String?
    private let seconds: Double
    private let loop: EventLoop
    private let output: (String) -> Void

    /// - Parameters:
    ///   - device: overrides `[devices] accelerometer`: a name glob, vendor:product, udev path,
    ///     /dev/input/eventN node or IIO sysfs directory.
    ///   - seconds: the sampling window.
    public init(
        config: CarbridgeConfig, device: String? = nil, seconds: Double, loop: EventLoop,
        output: @escaping (String) -> Void
    ) {
        var config = config
        if let device { config.devices.accelerometer = DeviceMatch(parsing: device) }
        // Calibrate as tilt steering would map, whatever the config's steering source is now.
        config.steering.source = .tilt
        self.config = config
        self.device = device
        self.seconds = seconds
        self.loop = loop
        self.output = output
    }

    /// Measures, then saves into `configFile` (or prints how to set the value without one).
    public func run(configFile: String?) throws {
        let measurement = try measure()
        try save(measurement.neutral, to: configFile)
        if let pitch = measurement.pitchNeutral {
            try save(pitch, to: configFile, key: ConfigKeys.pitchNeutral)
        }
    }

    /// Opens the accelerometer, samples it for the window and computes the neutral; warns on `output`
    /// when the roll varied too much.
    public func measure() throws -> Measurement {
        guard let tilt = config.mapperSettings.tilt else {
            throw CarbridgeError("tilt steering is not configured")
        }
        let sampler = try openAccelerometer()
        output("calibrate: reading \(sampler.description) for \(seconds) s; hold it still in the straight-ahead position")
        let samples = try sampler.collect(for: .milliseconds(Int64((seconds * 1000).rounded())))
        guard !samples.isEmpty else {
            throw CarbridgeError("\(sampler.description) gave no samples in \(seconds) s; move it a little, "
                + "check `carbridge monitor --tilt`, or try a longer --seconds")
        }
        let mapper = TiltMapper(settings: tilt)
        let count = Double(samples.count)
        let average = Vector3(
            x: samples.map(\.x).reduce(0, +) / count, y: samples.map(\.y).reduce(0, +) / count,
            z: samples.map(\.z).reduce(0, +) / count)
        guard let neutral = mapper.calibrateNeutral(from: average) else {
            throw CarbridgeError("the gravity vector over tilt_axes \"\(config.steering.tiltAxes)\" is zero; "
                + "check tilt_axes (the axis pointing down at rest must be the second one)")
        }
        let rolls = samples.compactMap { mapper.rawRollDegrees($0) }
        let spread = (rolls.max() ?? 0) - (rolls.min() ?? 0)
        var measurement = Measurement(neutral: neutral, sampleCount: samples.count, average: average, rollSpread: spread)
        if config.throttle.source == .tilt {
            // The tilt throttle's pitch, over its own axis pair, from the same samples.
            guard let pitch = TiltMapper(settings: config.pitchSettings).calibrateNeutral(from: average) else {
                throw CarbridgeError("the gravity vector over pitch_axes \"\(config.throttle.pitchAxes)\" is zero; "
                    + "check [throttle] pitch_axes (the axis pointing down at rest must be the second one)")
            }
            measurement.pitchNeutral = pitch
        }
        if measurement.moved {
            output("calibrate: warning: the roll varied by \(Int(spread.rounded()))° while sampling; hold the device still and run it again")
        }
        let magnitude = (average.x * average.x + average.y * average.y + average.z * average.z).squareRoot()
        output("calibrate: \(samples.count) samples, gravity \(CFormat.double("%.2f", magnitude)) m/s², roll \(measurement.rounded)°")
        return measurement
    }

    /// Writes `neutral` into `file`'s `[steering]` table (keeping every other line); without a file,
    /// prints the value and how to set it.
    public func save(_ neutral: Double, to file: String?, key: ConfigKey<Double> = ConfigKeys.neutral) throws {
        let rounded = ConfigFileEditor.roundedNeutral(neutral)
        let table = key.table
        guard let file else {
            output("\(key.name) = \(rounded)")
            output("not saved (no --config FILE): put `\(key.name) = \(rounded)` in the [\(table)] table of your config, "
                + "or run carbridge calibrate --config FILE")
            return
        }
        do {
            try ConfigFileEditor.saveNeutral(neutral, file: file, resolver: EventCodeNames(), key: key)
        } catch {
            throw CarbridgeError("\(key.name) = \(rounded), but it could not be saved in \(file) (\(error)); "
                + "set it by hand in the [\(table)] table")
        }
        output("\(key.name) = \(rounded) saved in \(file) [\(table)]")
    }

    private func openAccelerometer() throws -> AccelerometerSampler {
        if let device {
            if device.hasPrefix("/dev/") {
                return try AccelerometerSampler(
                    InputDeviceDescriptor(deviceClass: .accelerometer, name: device, syspath: device, devnode: device),
                    rateHertz: config.steering.sampleRateHertz, loop: loop)
            }
            if access(device + "/in_accel_x_raw", F_OK) == 0 {
                return try AccelerometerSampler(
                    InputDeviceDescriptor(
                        deviceClass: .iioAccelerometer, name: device, subsystem: "iio", syspath: device,
                        sysfsDirectory: device),
                    rateHertz: config.steering.sampleRateHertz, loop: loop)
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
            throw CarbridgeError(message)
        }
        if !(descriptor.deviceClass == .iioAccelerometer && descriptor.sysfsDirectory != nil), descriptor.devnode == nil {
            throw CarbridgeError("\"\(descriptor.name)\" has no device node to read")
        }
        return try AccelerometerSampler(descriptor, rateHertz: config.steering.sampleRateHertz, loop: loop)
    }
}

/// Collects the gravity samples (after the device's mount matrix) of an `AccelerometerSource`.
private final class AccelerometerSampler {
    private let source: AccelerometerSource
    private let loop: EventLoop
    private var samples: [Vector3] = []
    private var failure: String?

    var description: String { source.description }

    /// Opens `descriptor`; a mount matrix that does not parse is an error here, and so is an evdev node
    /// that is not an accelerometer.
    init(_ descriptor: InputDeviceDescriptor, rateHertz: Double, loop: EventLoop) throws {
        self.loop = loop
        source = try AccelerometerSource(descriptor: descriptor, loop: loop, rateHertz: rateHertz, strictMountMatrix: true)
        guard source.isAccelerometer else {
            throw CarbridgeError("\(descriptor.devnode ?? descriptor.syspath) (\"\(source.name)\") is not an accelerometer "
                + "(no INPUT_PROP_ACCELEROMETER); for a DualSense/DS4 use its \"Motion Sensors\" node")
        }
        if let a = source.currentAcceleration() { samples.append(a) }
        source.onFrame = { [weak self] frame in if let a = frame.acceleration { self?.samples.append(a) } }
        source.onGone = { [weak self] reason in self?.gone(reason) }
    }

    private func gone(_ reason: String) {
        failure = reason
        loop.stop()
    }

    /// Samples for `window` and returns every sample; throws when the device goes away meanwhile.
    func collect(for window: Duration) throws -> [Vector3] {
        try source.start()
        let deadline = loop.now().advanced(by: window)
        while loop.now() < deadline && failure == nil {
            try loop.run(until: deadline)
        }
        source.stop()
        if let failure { throw CarbridgeError("\(description) went away while calibrating: \(failure)") }
        return samples
    }
}
