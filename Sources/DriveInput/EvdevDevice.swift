import CEvdev
import CLinux
import DriveCore
import DriveInputModel
import DriveSystem
import Glibc

/// One evdev node on the event loop: normalised `InputFrame`s out, one `onGone` when the device goes away or
/// fails. libevdev opens, describes and grabs it; its reports are read raw (`RawEvdevReader`), with the
/// kernel's state (`EVIOCGKEY`, `EVIOCGABS`) as the resync after `SYN_DROPPED`, which is what libevdev's sync
/// does, without a second `read` per report.
public final class EvdevDevice {
    /// The node, e.g. `/dev/input/event7` (changes on every replug; never use it as an identity).
    public let path: String
    /// What the device says about itself.
    public let info: InputDeviceInfo
    /// Called with every raw event before it is assembled (for `carbridge monitor`).
    public var onEvent: ((InputEvent) -> Void)? {
        get { reader.onEvent }
        set { reader.onEvent = newValue }
    }
    /// Called with every completed frame.
    public var onFrame: ((InputFrame) -> Void)? {
        get { reader.onFrame }
        set { reader.onFrame = newValue }
    }
    /// Called once when the device is removed (`ENODEV`) or a read fails; the device is closed by then.
    public var onGone: ((String) -> Void)?
    /// True until `close()` or a removal.
    public private(set) var isOpen = true
    /// True when this process grabbed the device (`EVIOCGRAB`).
    public private(set) var isGrabbed = false

    private let loop: EventLoop
    private var fd: Int32
    private var evdev: OpaquePointer?
    /// Reads the node (it does not own the fd: `close` closes it after libevdev is freed).
    private let reader: RawEvdevReader
    private var goneReported = false

    /// Opens `path` (`O_RDONLY|O_NONBLOCK|O_CLOEXEC`) with libevdev, optionally grabbing it.
    /// Throws `InputDeviceError` (`.notFound`, `.permissionDenied`, `.notAnEvdevDevice`, `.grabFailed`).
    /// Call `start()` to begin reading.
    public init(path: String, loop: EventLoop, grab: Bool = false, axisShapes: [UInt16: AxisShape] = [:]) throws {
        self.path = path
        self.loop = loop
        let opened = cb_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0)
        if opened < 0 {
            let code = errno
            switch code {
            case ENOENT, ENODEV, ENXIO: throw InputDeviceError.notFound(path: path)
            case EACCES, EPERM: throw InputDeviceError.permissionDenied(path: path, owner: Self.ownerDescription(path))
            default: throw InputDeviceError.system(SystemError(call: "open \(path)", errno: code))
            }
        }
        var device: OpaquePointer?
        let rc = libevdev_new_from_fd(opened, &device)
        guard rc >= 0, let device else {
            Syscall.close(opened)
            throw InputDeviceError.notAnEvdevDevice(path: path, reason: String(cString: strerror(-rc)))
        }
        fd = opened
        evdev = device
        info = Self.describe(device)
        var keysDown: Set<UInt16> = []
        for code in info.keys where libevdev_get_event_value(device, UInt32(EvdevCode.evKey), UInt32(code)) != 0 {
            keysDown.insert(code)
        }
        let assembler = EvdevFrameAssembler(
            absInfo: info.axes, axisShapes: axisShapes, isAccelerometer: info.isAccelerometer,
            keysDown: keysDown, knowsInitialAxisValues: true)
        do {
            reader = try RawEvdevReader(fd: opened, loop: loop, assembler: assembler, ownsFD: false)
        } catch {
            libevdev_free(device)
            Syscall.close(opened)
            throw InputDeviceError.system(error as? SystemError ?? SystemError(call: "fcntl \(path)", errno: EINVAL))
        }
        if grab {
            let grabbed = libevdev_grab(device, LIBEVDEV_GRAB)
            if grabbed < 0 {
                libevdev_free(device)
                Syscall.close(opened)
                evdev = nil
                fd = -1
                isOpen = false
                throw InputDeviceError.grabFailed(path: path, reason: String(cString: strerror(-grabbed)))
            }
            isGrabbed = true
        }
        // The snapshot is read from the node, never the assembler.
        reader.stateSource = { [weak self] in self?.kernelState() }
        reader.onGone = { [weak self] reason in self?.gone(reason) }
    }

    deinit {
        // The reader's watch first (the loop must never read a closed fd), then libevdev, then the fd.
        reader.close()
        if let evdev { libevdev_free(evdev) }
        Syscall.close(fd)
    }

    /// Opens `path`, retrying `EACCES` for up to `window` (the ACL of a fresh hotplugged node arrives late)
    /// on loop timers; `completion` gets the device or the final error (an `InputDeviceError` whose text
    /// names the udev rule to install). Keep the returned retry to `cancel()` it.
    @discardableResult
    public static func open(
        path: String, loop: EventLoop, grab: Bool = false, axisShapes: [UInt16: AxisShape] = [:],
        window: Duration = .seconds(2), completion: @escaping (Result<EvdevDevice, Error>) -> Void
    ) -> PermissionRetry<EvdevDevice> {
        PermissionRetry(
            loop: loop, window: window,
            attempt: { try EvdevDevice(path: path, loop: loop, grab: grab, axisShapes: axisShapes) },
            completion: completion)
    }

    /// The assembler's idea of the device state (keys down, last raw axis values).
    public var keysDown: Set<UInt16> { reader.keysDown }

    /// The last raw value of each axis.
    public var axisValues: [UInt16: Int32] { reader.axisValues }

    /// The device's whole current state as one frame (all axes, keys down), to prime a mapper after opening.
    public func stateFrame() -> InputFrame { reader.stateFrame(at: loop.now()) }

    /// Starts reading on the loop.
    public func start() throws {
        guard isOpen else { return }
        do {
            try reader.start()
        } catch let error as SystemError {
            throw InputDeviceError.system(error)
        }
    }

    /// Stops reading, ungrabs and closes the node (no `onGone`).
    public func close() {
        guard isOpen else { return }
        isOpen = false
        reader.close()
        if let evdev {
            if isGrabbed { _ = libevdev_grab(evdev, LIBEVDEV_UNGRAB) }
            libevdev_free(evdev)
        }
        evdev = nil
        Syscall.close(fd)
        fd = -1
    }

    /// The device's state as the kernel has it, for the resync after `SYN_DROPPED` (nil: the ioctls failed,
    /// and the assembler releases every key and re-asserts the last axes).
    private func kernelState() -> EvdevStateSnapshot? {
        guard isOpen else { return nil }
        var bits = [UInt8](repeating: 0, count: Int(KEY_MAX) / 8 + 1)
        let keysRead = bits.withUnsafeMutableBytes { cb_ioctl_ptr(fd, cb_EVIOCGKEY(UInt32($0.count)), $0.baseAddress) }
        guard keysRead >= 0 else { return nil }
        var snapshot = EvdevStateSnapshot()
        for code in info.keys where Int(code) / 8 < bits.count && bits[Int(code) / 8] & (1 << (code % 8)) != 0 {
            snapshot.keysDown.insert(code)
        }
        for code in info.axes.keys {
            var abs = input_absinfo()
            guard cb_ioctl_ptr(fd, cb_EVIOCGABS(UInt32(code)), &abs) >= 0 else { return nil }
            snapshot.axisValues[code] = abs.value
        }
        return snapshot
    }

    private func gone(_ reason: String) {
        guard !goneReported else { return }
        goneReported = true
        close()
        onGone?(reason)
    }

    private static func describe(_ device: OpaquePointer) -> InputDeviceInfo {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        var info = InputDeviceInfo(
            name: text(libevdev_get_name(device)) ?? "",
            bustype: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(device)),
            vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(device)),
            product: UInt16(truncatingIfNeeded: libevdev_get_id_product(device)),
            version: UInt16(truncatingIfNeeded: libevdev_get_id_version(device)),
            phys: text(libevdev_get_phys(device)), uniq: text(libevdev_get_uniq(device)))
        for property in 0..<UInt32(INPUT_PROP_CNT) where libevdev_has_property(device, property) != 0 {
            info.properties.insert(UInt16(property))
        }
        for code in 0...UInt32(KEY_MAX) where libevdev_has_event_code(device, UInt32(EV_KEY), code) != 0 {
            info.keys.insert(UInt16(code))
        }
        for code in 0...UInt32(ABS_MAX) where libevdev_has_event_code(device, UInt32(EV_ABS), code) != 0 {
            if let abs = libevdev_get_abs_info(device, code)?.pointee {
                info.axes[UInt16(code)] = AbsInfo(
                    minimum: abs.minimum, maximum: abs.maximum, fuzz: abs.fuzz, flat: abs.flat,
                    resolution: abs.resolution, value: abs.value)
            }
        }
        return info
    }

    /// `owner:group mode` of `path` for error messages, e.g. `root:input 0660`.
    static func ownerDescription(_ path: String) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else { return "an unknown owner" }
        let user = getpwuid(status.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "\(status.st_uid)"
        let group = getgrgid(status.st_gid).map { String(cString: $0.pointee.gr_name) } ?? "\(status.st_gid)"
        let mode = String(status.st_mode & 0o7777, radix: 8)
        return "\(user):\(group) mode \(mode)"
    }
}
