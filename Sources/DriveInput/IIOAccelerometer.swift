import DriveCore
import DriveInputModel
import DriveSystem
import CLinux
import Glibc

/// An IIO accelerometer read from its sysfs directory (`/sys/bus/iio/devices/iio:deviceN`) at a fixed rate on
/// loop timers (absolute grid, no sleeping): value = (raw + offset) × scale in m/s², per axis.
///
/// The raw files are opened once and re-read with `pread`; a file that was replaced is re-opened, and one that
/// vanished or fails (`ENOENT`, `ENODEV`, `EIO`, …) ends the reader with one `onGone`.
///
/// Every value must be a finite decimal (`IIOValue.parse`): a scale or offset that is not (`nan`, `inf`,
/// `1e400`, garbage) fails `init` with an `IIOValueError`; a raw value that is not, or a sample that
/// overflows to a non-finite value (after `transform` too), is a read error that ends the reader with one
/// `onGone` naming the file and the text — a NaN or infinite sample is never emitted.
public final class IIOAccelerometer {
    /// The sysfs directory.
    public let directory: String
    /// The sensor's `name` attribute, if any.
    public let name: String?
    /// Samples per second.
    public let rateHertz: Double
    /// The mount matrix text (`x1, y1, z1; x2, y2, z2; x3, y3, z3`) from udev `ACCEL_MOUNT_MATRIX`, else sysfs
    /// `in_accel_mount_matrix`, else `mount_matrix`; nil when none. DriveMapping's `MountMatrix` parses it.
    public let mountMatrixText: String?
    /// The per-axis scales (x, y, z) read at open.
    public let scales: Vector3
    /// The per-axis offsets (x, y, z) read at open.
    public let offsets: Vector3
    /// Applied to each sample before it is emitted (e.g. the parsed mount matrix).
    public var transform: ((Vector3) -> Vector3)?
    /// Called with each sample as `InputFrame(acceleration:)`.
    public var onFrame: ((InputFrame) -> Void)?
    /// Called once when the device goes away or a read fails; the reader is stopped by then.
    public var onGone: ((String) -> Void)?
    /// True between `start()` and `stop()` (or a removal).
    public private(set) var isRunning = false

    private struct RawFile {
        let path: String
        var fd: Int32
    }

    private let loop: EventLoop
    private let periodNanoseconds: Int64
    private var files: [RawFile]
    private var gridStart = Instant.zero
    private var tick: Int64 = 0
    private var timer: EventLoop.TimerID?
    private var goneReported = false

    /// Opens `in_accel_{x,y,z}_raw` in `directory` and reads the scales and offsets (per-axis
    /// `in_accel_x_scale` before shared `in_accel_scale`, default 1; offsets likewise, default 0).
    /// Throws `InputDeviceError.notFound` when a raw file is missing, `.permissionDenied` when unreadable,
    /// `IIOValueError` when a scale or offset file holds anything but a finite decimal.
    public init(
        directory: String, loop: EventLoop, rateHertz: Double = 50, udevMountMatrix: String? = nil,
        transform: ((Vector3) -> Vector3)? = nil
    ) throws {
        self.directory = directory
        self.loop = loop
        self.rateHertz = rateHertz > 0 ? rateHertz : 50
        self.periodNanoseconds = max(1, Int64((1e9 / self.rateHertz).rounded()))
        self.transform = transform
        self.name = SysfsFile.readText(directory + "/name")
        self.mountMatrixText = Self.findMountMatrixText(directory: directory, udevMountMatrix: udevMountMatrix)
        func number(_ axis: String, _ kind: String, default fallback: Double) throws(IIOValueError) -> Double {
            for path in ["\(directory)/in_accel_\(axis)_\(kind)", "\(directory)/in_accel_\(kind)"] {
                guard let text = SysfsFile.readText(path) else { continue }
                do {
                    return try IIOValue.parse(text)
                } catch {
                    var error = error
                    error.path = path
                    throw error
                }
            }
            return fallback
        }
        scales = Vector3(
            x: try number("x", "scale", default: 1), y: try number("y", "scale", default: 1),
            z: try number("z", "scale", default: 1))
        offsets = Vector3(
            x: try number("x", "offset", default: 0), y: try number("y", "offset", default: 0),
            z: try number("z", "offset", default: 0))
        files = []
        for axis in ["x", "y", "z"] {
            let path = "\(directory)/in_accel_\(axis)_raw"
            let fd = cb_open(path, O_RDONLY | O_CLOEXEC, 0)
            if fd < 0 {
                let code = errno
                for file in files { Syscall.close(file.fd) }
                switch code {
                case ENOENT, ENODEV: throw InputDeviceError.notFound(path: path)
                case EACCES, EPERM:
                    throw InputDeviceError.permissionDenied(path: path, owner: EvdevDevice.ownerDescription(path))
                default: throw InputDeviceError.system(SystemError(call: "open \(path)", errno: code))
                }
            }
            files.append(RawFile(path: path, fd: fd))
        }
    }

    deinit {
        if let timer { loop.cancel(timer) }
        for file in files { Syscall.close(file.fd) }
    }

    /// The mount matrix text: udev `ACCEL_MOUNT_MATRIX` first (it overrides the driver, as in
    /// iio-sensor-proxy), then `in_accel_mount_matrix`, then `mount_matrix` in `directory`.
    public static func findMountMatrixText(directory: String, udevMountMatrix: String?) -> String? {
        if let udev = udevMountMatrix?.trimmingWhitespace(), !udev.isEmpty { return udev }
        for file in ["in_accel_mount_matrix", "mount_matrix"] {
            if let text = SysfsFile.readText("\(directory)/\(file)"), !text.isEmpty { return text }
        }
        return nil
    }

    /// Starts sampling: the first sample at once, then every period on the grid from now.
    public func start() {
        guard !isRunning, !goneReported else { return }
        isRunning = true
        gridStart = loop.now()
        tick = 0
        timer = loop.schedule(at: gridStart) { [weak self] in self?.fire() }
    }

    /// Stops sampling (files stay open; `start()` resumes).
    public func stop() {
        isRunning = false
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    /// Reads one sample now: (raw + offset) × scale per axis, before `transform`. Throws `IIOValueError` for
    /// a raw value that is not a finite decimal or a sample that is not finite; another error when a file
    /// vanished or could not be read.
    public func readAcceleration() throws -> Vector3 {
        var values: [Double] = []
        for index in files.indices {
            values.append(try readRaw(index))
        }
        let sample = Vector3(
            x: (values[0] + offsets.x) * scales.x, y: (values[1] + offsets.y) * scales.y,
            z: (values[2] + offsets.z) * scales.z)
        try Self.checkFinite(sample, what: "(raw + offset) × scale of raw \(values.map { "\($0)" }.joined(separator: ", "))")
        return sample
    }

    /// Throws unless every component of `sample` is finite.
    static func checkFinite(_ sample: Vector3, what: String) throws(IIOValueError) {
        guard sample.x.isFinite, sample.y.isFinite, sample.z.isFinite else {
            throw IIOValueError(
                path: nil, text: "\(sample.x), \(sample.y), \(sample.z)",
                reason: "\(what) overflows; the sensor's values are out of any sane range")
        }
    }

    private func fire() {
        timer = nil
        guard isRunning else { return }
        let now = loop.now()
        do {
            var sample = try readAcceleration()
            if let transform {
                sample = transform(sample)
                try Self.checkFinite(sample, what: "the mount matrix applied to the sample")
            }
            onFrame?(InputFrame(time: now, acceleration: sample))
        } catch let error as IIOReadError {
            switch error {
            case .gone(let reason): return gone(reason)
            }
        } catch let error as IIOValueError {
            var error = error
            if error.path == nil { error.path = directory }
            return gone("\(error)")
        } catch {
            return gone("\(error)")
        }
        guard isRunning else { return }
        // Next point on the grid after now (late wakeups skip samples instead of bunching them).
        let elapsed = loop.now().nanoseconds - gridStart.nanoseconds
        tick = max(tick + 1, elapsed / periodNanoseconds + 1)
        timer = loop.schedule(at: Instant(nanoseconds: gridStart.nanoseconds + tick * periodNanoseconds)) { [weak self] in
            self?.fire()
        }
    }

    private enum IIOReadError: Error {
        case gone(String)
    }

    private func readRaw(_ index: Int) throws -> Double {
        var status = stat()
        if fstat(files[index].fd, &status) == 0 && status.st_nlink == 0 {
            // The file was unlinked (replaced or removed): open the path again.
            let fd = cb_open(files[index].path, O_RDONLY | O_CLOEXEC, 0)
            if fd < 0 {
                throw IIOReadError.gone("\(files[index].path) vanished: \(String(cString: strerror(errno)))")
            }
            Syscall.close(files[index].fd)
            files[index].fd = fd
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { pread(files[index].fd, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        if count < 0 {
            let code = errno
            throw IIOReadError.gone("reading \(files[index].path) failed: \(String(cString: strerror(code))) (errno \(code))")
        }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        do {
            return try IIOValue.parse(text)
        } catch {
            var error = error
            error.path = files[index].path
            throw error
        }
    }

    private func gone(_ reason: String) {
        guard !goneReported else { return }
        goneReported = true
        stop()
        for index in files.indices {
            Syscall.close(files[index].fd)
            files[index].fd = -1
        }
        onGone?(reason)
    }
}
