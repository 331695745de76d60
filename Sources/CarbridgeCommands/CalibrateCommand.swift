import ArgumentParser
import DriveConfig
import DriveRuntime
import DriveSystem

/// `carbridge calibrate`: record the current tilt as straight ahead (`[steering] neutral_deg`).
struct CalibrateCommand: CarbridgeCommand {
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
        if !seconds.isFinite || !(0.2...30).contains(seconds) {
            throw ValidationError("--seconds: \(seconds) must be between 0.2 and 30")
        }
    }

    func run() throws {
        let config = try common.loadConfig()
        let session = CalibrationSession(
            config: config, device: device, seconds: seconds, loop: try EventLoop(), output: say)
        try session.run(configFile: common.config)
    }
}
