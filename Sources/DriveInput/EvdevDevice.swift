import CEvdev
import CLinux
import DriveCore
import DriveMapping
import DriveSystem
import Glibc

/// One evdev node read through libevdev on the event loop: normalised `InputFrame`s out, one `onGone` when
/// the device goes away or fails.
public final class EvdevDevice {
    /// The node, e.g. `/dev/input/event7` (changes on every replug; never use it as an identity).
    public let path: String
    /// What the device says about itself.
    public let info: InputDeviceInfo
    /// Called with every raw event before it is assembled (for `carbridge monitor`).
    @exclusivity(unchecked) public var onEvent: ((InputEvent) -> Void)?
    /// Called with every completed frame.
    @exclusivity(unchecked) public var onFrame: ((InputFrame) -> Void)?
    /// Called once when the device is removed (`ENODEV`) or a read fails; the device is closed by then.
    public var onGone: ((String) -> Void)?
    /// True until `close()` or a removal.
    @exclusivity(unchecked) public private(set) var isOpen = true
    /// True when this process grabbed the device (`EVIOCGRAB`).
    public private(set) var isGrabbed = false

    private let loop: EventLoop
    @exclusivity(unchecked) private var fd: Int32
    @exclusivity(unchecked) private var evdev: OpaquePointer?
    @exclusivity(unchecked) private var assembler: EvdevFrameAssembler
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
        assembler = EvdevFrameAssembler(
            absInfo: info.axes, axisShapes: axisShapes, isAccelerometer: info.isAccelerometer,
            keysDown: keysDown, knowsInitialAxisValues: true)
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
    }

    deinit {
        // The loop holds the reading closure, which holds the device unowned: it must never run again.
        if isOpen { loop.unwatch(fd) }
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
    public var keysDown: Set<UInt16> { assembler.keysDown }

    /// The last raw value of each axis.
    public var axisValues: [UInt16: Int32] { assembler.axisValues }

    /// The device's whole current state as one frame (all axes, keys down), to prime a mapper after opening.
    public func stateFrame() -> InputFrame { assembler.stateFrame(at: loop.now()) }

    /// Starts reading on the loop.
    public func start() throws {
        guard isOpen else { return }
        do {
            // Unowned, not weak: a weak reference gives the device a side table, and every retain and release of
            // it (several per input report) takes the runtime's slow path. `deinit` unwatches the fd, so the
            // closure never outlives the device; while it runs it holds the device (a removal inside it is safe).
            try loop.watch(fd, for: .readable) { [unowned self] events in self.readAvailable(events) }
        } catch let error as SystemError {
            throw InputDeviceError.system(error)
        }
    }

    /// Stops reading, ungrabs and closes the node (no `onGone`).
    public func close() {
        guard isOpen else { return }
        isOpen = false
        loop.unwatch(fd)
        if let evdev {
            if isGrabbed { _ = libevdev_grab(evdev, LIBEVDEV_UNGRAB) }
            libevdev_free(evdev)
        }
        evdev = nil
        Syscall.close(fd)
        fd = -1
    }

    private func readAvailable(_ events: IOEvents) {
        guard isOpen, let evdev else { return }
        let now = loop.turnTime()
        var event = input_event()
        var readSomething = false
        while isOpen {
            let rc = libevdev_next_event(evdev, LIBEVDEV_READ_FLAG_NORMAL.rawValue, &event)
            if rc == Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue) {
                readSomething = true
                let decoded = InputEvent(kernel: event)
                onEvent?(decoded)
                assembler.feed(decoded, at: now) { frame in onFrame?(frame) }
            } else if rc == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                // SYN_DROPPED: libevdev drained the kernel queue; the sync events describe the current state.
                readSomething = true
                assembler.discardPending()
                var status = libevdev_next_event(evdev, LIBEVDEV_READ_FLAG_SYNC.rawValue, &event)
                while status == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                    let decoded = InputEvent(kernel: event)
                    onEvent?(decoded)
                    assembler.feed(decoded, at: now) { frame in onFrame?(frame) }
                    status = libevdev_next_event(evdev, LIBEVDEV_READ_FLAG_SYNC.rawValue, &event)
                }
                assembler.feed(InputEvent(type: EvdevCode.evSyn, code: EvdevCode.synReport, value: 0), at: now) { frame in
                    onFrame?(frame)
                }
                if status != -EAGAIN { return gone(Self.reason(for: -status)) }
            } else if rc == -EAGAIN {
                break
            } else {
                return gone(Self.reason(for: -rc))
            }
        }
        if isOpen && !readSomething && (events.contains(.hangup) || events.contains(.error)) {
            gone("the device hung up")
        }
    }

    private func gone(_ reason: String) {
        guard !goneReported else { return }
        goneReported = true
        close()
        onGone?(reason)
    }

    private static func reason(for code: Int32) -> String {
        code == ENODEV ? "\("device removed") (ENODEV)" : "read failed: \(String(cString: strerror(code))) (errno \(code))"
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
