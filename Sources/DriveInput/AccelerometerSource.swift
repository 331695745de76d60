import DriveCore
import DriveInputModel
import DriveSystem

/// An accelerometer, evdev (`INPUT_PROP_ACCELEROMETER`, e.g. a DualSense's motion sensors) or IIO
/// (a sysfs directory with `in_accel_{x,y,z}_raw`), delivering `InputFrame`s whose gravity vector has the
/// device's own mount matrix applied: for evdev the udev `ACCEL_MOUNT_MATRIX`, for IIO the udev property,
/// else the driver's `in_accel_mount_matrix`/`mount_matrix` (`IIOAccelerometer.findMountMatrixText`).
///
/// A mount matrix that does not parse is left out (`mountMatrixError` says why), unless the source was
/// opened with `strictMountMatrix`, which throws it instead.
public final class AccelerometerSource: InputSource {
    private enum Device {
        case evdev(EvdevDevice)
        case iio(IIOAccelerometer)
    }

    private let device: Device
    /// The device in words: `"name" (/dev/input/eventN)` or `IIO accelerometer "name" (directory)`.
    public let description: String
    /// The mount matrix applied to every gravity vector; nil when the device has none (or it did not parse).
    public let mountMatrix: MountMatrix?
    /// Why the device's mount matrix text was not used, when it did not parse.
    public let mountMatrixError: MountMatrix.ParseError?
    /// Called with every frame, the acceleration after the mount matrix.
    public var onFrame: ((InputFrame) -> Void)?
    /// Called once when the device goes away or a read fails.
    public var onGone: ((String) -> Void)?

    /// Opens the accelerometer `descriptor` names: its IIO `sysfsDirectory` for an `.iioAccelerometer`,
    /// else its `devnode` (evdev, not grabbed). Throws what `IIOAccelerometer`/`EvdevDevice` throw
    /// (`InputDeviceError.notFound` for a descriptor with neither), and with `strictMountMatrix` a
    /// `MountMatrix.ParseError` (for evdev before the node is opened).
    public convenience init(
        descriptor: InputDeviceDescriptor, loop: EventLoop, rateHertz: Double = 50, strictMountMatrix: Bool = false
    ) throws {
        if descriptor.deviceClass == .iioAccelerometer, let directory = descriptor.sysfsDirectory {
            let iio = try IIOAccelerometer(
                directory: directory, loop: loop, rateHertz: rateHertz, udevMountMatrix: descriptor.udevMountMatrix)
            self.init(iio: iio)
        } else {
            guard let node = descriptor.devnode else {
                throw InputDeviceError.notFound(path: descriptor.syspath)
            }
            if strictMountMatrix, let text = descriptor.udevMountMatrix { _ = try MountMatrix.parse(text) }
            self.init(evdev: try EvdevDevice(path: node, loop: loop), udevMountMatrix: descriptor.udevMountMatrix)
        }
        if strictMountMatrix, let mountMatrixError { throw mountMatrixError }
    }

    /// Wraps an open IIO accelerometer; its `transform` becomes the mount matrix of `mountMatrixText`.
    public init(iio: IIOAccelerometer) {
        device = .iio(iio)
        description = "IIO accelerometer \"\(iio.name ?? "?")\" (\(iio.directory))"
        (mountMatrix, mountMatrixError) = Self.parse(iio.mountMatrixText)
        if let mountMatrix { iio.transform = { mountMatrix.apply($0) } }
        iio.onFrame = { [weak self] frame in self?.onFrame?(frame) }
        iio.onGone = { [weak self] reason in self?.onGone?(reason) }
    }

    /// Wraps an open evdev device; `udevMountMatrix` (its udev `ACCEL_MOUNT_MATRIX`) is applied to the
    /// acceleration of each frame.
    public init(evdev: EvdevDevice, udevMountMatrix: String?) {
        device = .evdev(evdev)
        description = evdev.description
        (mountMatrix, mountMatrixError) = Self.parse(udevMountMatrix)
        let mountMatrix = mountMatrix
        evdev.onFrame = { [weak self] frame in
            var frame = frame
            if let mountMatrix, let acceleration = frame.acceleration { frame.acceleration = mountMatrix.apply(acceleration) }
            self?.onFrame?(frame)
        }
        evdev.onGone = { [weak self] reason in self?.onGone?(reason) }
    }

    /// The device's own name: the evdev name, or the IIO `name` attribute (`?` without one).
    public var name: String {
        switch device {
        case .evdev(let evdev): evdev.info.name
        case .iio(let iio): iio.name ?? "?"
        }
    }

    /// True for IIO devices and evdev devices with `INPUT_PROP_ACCELEROMETER`.
    public var isAccelerometer: Bool {
        switch device {
        case .evdev(let evdev): evdev.info.isAccelerometer
        case .iio: true
        }
    }

    /// The gravity vector the evdev device holds already (after the mount matrix), before any event was
    /// read; nil for IIO and when it is all zero (nothing known yet).
    public func currentAcceleration() -> Vector3? {
        guard case .evdev(let evdev) = device, let acceleration = evdev.stateFrame().acceleration,
            acceleration != Vector3(x: 0, y: 0, z: 0)
        else { return nil }
        return mountMatrix?.apply(acceleration) ?? acceleration
    }

    /// Starts reading (evdev) or sampling (IIO) on the loop.
    public func start() throws {
        switch device {
        case .evdev(let evdev): try evdev.start()
        case .iio(let iio): iio.start()
        }
    }

    /// Stops: an evdev node is closed, an IIO device stops sampling.
    public func stop() {
        switch device {
        case .evdev(let evdev): evdev.close()
        case .iio(let iio): iio.stop()
        }
    }

    private static func parse(_ text: String?) -> (MountMatrix?, MountMatrix.ParseError?) {
        guard let text else { return (nil, nil) }
        do {
            return (try MountMatrix.parse(text), nil)
        } catch {
            return (nil, error)
        }
    }
}
