import DriveInputModel
import CUdev
import DriveSystem
import Glibc

/// Finds input devices with libudev: enumerates the `input` (eventN nodes only) and `iio` subsystems, then
/// watches a udev monitor on the event loop and reports devices appearing and disappearing.
public final class UdevWatcher {
    /// Called for every relevant device: each one enumerated by `start()`, then each one added later.
    public var onAppeared: ((InputDeviceDescriptor) -> Void)?
    /// Called with the syspath of a reported device that was removed.
    public var onDisappeared: ((String) -> Void)?
    /// Called with every `hid` subsystem event (a HID device appearing, bound to a driver, removed): a pad whose
    /// driver refuses it makes no input node, and this is how carbridge learns of it (`UnboundHidDevices`).
    public var onHidEvent: ((HidDeviceEvent) -> Void)?
    /// True while the udev monitor is being watched.
    public private(set) var isMonitoring = false

    private let loop: EventLoop
    private let udev: OpaquePointer
    private var monitor: OpaquePointer?
    private var monitorFD: Int32 = -1
    private var known: Set<String> = []

    /// Creates the libudev context. Throws `InputDeviceError.system` when libudev cannot start.
    public init(loop: EventLoop) throws {
        guard let context = udev_new() else {
            throw InputDeviceError.system(SystemError(call: "udev_new", errno: errno == 0 ? ENOMEM : errno))
        }
        self.loop = loop
        self.udev = context
    }

    deinit {
        stop()
        udev_unref(udev)
    }

    /// The syspaths of devices reported and not yet removed.
    public var knownSyspaths: Set<String> { known }

    /// Starts the monitor (first, so nothing added meanwhile is missed), then enumerates: every relevant
    /// device present goes to `onAppeared` and is returned. Throws `InputDeviceError.system` when the udev
    /// monitor cannot be created (no netlink, e.g. in a container); call `enumerate()` then for a one-off list.
    @discardableResult
    public func start() throws -> [InputDeviceDescriptor] {
        if !isMonitoring { try startMonitor() }
        let devices = Self.enumerate(udev)
        for device in devices where !known.contains(device.syspath) {
            known.insert(device.syspath)
            onAppeared?(device)
        }
        return devices
    }

    /// Stops watching the monitor.
    public func stop() {
        if isMonitoring { loop.unwatch(monitorFD) }
        isMonitoring = false
        if let monitor { udev_monitor_unref(monitor) }
        monitor = nil
        monitorFD = -1
    }

    /// Every relevant device present now (input eventN nodes and iio devices), sorted by syspath.
    /// Returns an empty list when libudev is unavailable or sees nothing.
    public static func enumerate() -> [InputDeviceDescriptor] {
        guard let context = udev_new() else { return [] }
        defer { udev_unref(context) }
        return enumerate(context)
    }

    private static func enumerate(_ context: OpaquePointer) -> [InputDeviceDescriptor] {
        guard let enumeration = udev_enumerate_new(context) else { return [] }
        defer { udev_enumerate_unref(enumeration) }
        _ = udev_enumerate_add_match_subsystem(enumeration, "input")
        _ = udev_enumerate_add_match_subsystem(enumeration, "iio")
        // Only the nodes `describe` takes: libudev skips the others by their directory entry's name,
        // before it builds a device (inputN, mouseN, jsN, mice: each a path walk and a udev database read).
        _ = udev_enumerate_add_match_sysname(enumeration, "event*")
        _ = udev_enumerate_add_match_sysname(enumeration, "iio:device*")
        guard udev_enumerate_scan_devices(enumeration) >= 0 else { return [] }
        var result: [InputDeviceDescriptor] = []
        var entry = udev_enumerate_get_list_entry(enumeration)
        while let current = entry {
            if let syspath = udev_list_entry_get_name(current),
                let device = udev_device_new_from_syspath(context, syspath)
            {
                if let descriptor = describe(device) { result.append(descriptor) }
                udev_device_unref(device)
            }
            entry = udev_list_entry_get_next(current)
        }
        return result.sorted { $0.syspath < $1.syspath }
    }

    private func startMonitor() throws {
        guard let created = udev_monitor_new_from_netlink(udev, "udev") else {
            throw InputDeviceError.system(SystemError(call: "udev_monitor_new_from_netlink(udev)", errno: errno == 0 ? EPROTONOSUPPORT : errno))
        }
        _ = udev_monitor_filter_add_match_subsystem_devtype(created, "input", nil)
        _ = udev_monitor_filter_add_match_subsystem_devtype(created, "iio", nil)
        _ = udev_monitor_filter_add_match_subsystem_devtype(created, "hid", nil)
        let rc = udev_monitor_enable_receiving(created)
        if rc < 0 {
            udev_monitor_unref(created)
            throw InputDeviceError.system(SystemError(call: "udev_monitor_enable_receiving", errno: -rc))
        }
        let fd = udev_monitor_get_fd(created)
        do {
            try Syscall.setNonBlocking(fd)
            try loop.watch(fd, for: .readable) { [weak self] _ in self?.receive() }
        } catch {
            udev_monitor_unref(created)
            throw error
        }
        monitor = created
        monitorFD = fd
        isMonitoring = true
    }

    private func receive() {
        while isMonitoring, let monitor, let device = udev_monitor_receive_device(monitor) {
            defer { udev_device_unref(device) }
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? ""
            guard let syspathPointer = udev_device_get_syspath(device) else { continue }
            let syspath = String(cString: syspathPointer)
            if udev_device_get_subsystem(device).map({ String(cString: $0) }) == "hid" {
                if let event = HidDeviceEvent(action: action, syspath: syspath, properties: Self.properties(of: device)) {
                    onHidEvent?(event)
                }
                continue
            }
            switch action {
            case "add", "change":
                guard !known.contains(syspath), let descriptor = Self.describe(device) else { continue }
                known.insert(syspath)
                onAppeared?(descriptor)
            case "remove":
                if known.remove(syspath) != nil { onDisappeared?(syspath) }
            default:
                continue
            }
        }
    }

    /// The address (or serial) of the HID device an input node belongs to, for a driver that leaves the input
    /// device's own `uniq` empty: hid-wiimote gives a balance board's node none, the HID device has `HID_UNIQ`.
    private static func hidUniq(of device: OpaquePointer) -> String? {
        guard let hid = udev_device_get_parent_with_subsystem_devtype(device, "hid", nil),
              let value = udev_device_get_property_value(hid, "HID_UNIQ") else { return nil }
        let uniq = String(cString: value)
        return uniq.isEmpty ? nil : uniq
    }

    private static func properties(of device: OpaquePointer) -> [String: String] {
        var properties: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(device)
        while let current = entry {
            if let name = udev_list_entry_get_name(current) {
                properties[String(cString: name)] = udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
            }
            entry = udev_list_entry_get_next(current)
        }
        return properties
    }

    /// A descriptor for an `input` eventN device or an `iio` device; nil for anything else.
    private static func describe(_ device: OpaquePointer) -> InputDeviceDescriptor? {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        guard let subsystem = text(udev_device_get_subsystem(device)),
            let sysname = text(udev_device_get_sysname(device)),
            let syspath = text(udev_device_get_syspath(device))
        else { return nil }
        let properties = properties(of: device)
        let devnode = text(udev_device_get_devnode(device))
        switch subsystem {
        case "input":
            guard sysname.hasPrefix("event") else { return nil }
            let parent = udev_device_get_parent_with_subsystem_devtype(device, "input", nil)
            func parentAttribute(_ name: String) -> String? {
                guard let parent else { return nil }
                return text(udev_device_get_sysattr_value(parent, name))?.trimmingWhitespace()
            }
            let keys = parentAttribute("capabilities/key").map { DeviceClassifier.bits(ofSysfsBitmask: $0) } ?? []
            let inputProperties = parentAttribute("properties").map { DeviceClassifier.bits(ofSysfsBitmask: $0) } ?? []
            let quotedName = properties["NAME"].map { $0.trimmingCharacters(of: "\"") }
            let name = parentAttribute("name") ?? quotedName ?? sysname
            let vendor = parentAttribute("id/vendor").flatMap { UInt16($0, radix: 16) }
            let product = parentAttribute("id/product").flatMap { UInt16($0, radix: 16) }
            return InputDeviceDescriptor(
                deviceClass: DeviceClassifier.classifyInput(
                    properties: properties, keys: keys, inputProperties: inputProperties, name: name, vendor: vendor,
                    product: product),
                name: name, vendor: vendor, product: product,
                bustype: parentAttribute("id/bustype").flatMap { UInt16($0, radix: 16) },
                subsystem: subsystem, syspath: syspath, devnode: devnode, idPath: properties["ID_PATH"],
                uniq: parentAttribute("uniq").flatMap { $0.isEmpty ? nil : $0 } ?? hidUniq(of: device),
                udevMountMatrix: properties["ACCEL_MOUNT_MATRIX"], properties: properties)
        case "iio":
            guard sysname.hasPrefix("iio:device") else { return nil }
            let names = Set(SysfsFile.directoryEntries(syspath) ?? [])
            return InputDeviceDescriptor(
                deviceClass: DeviceClassifier.classifyIIO(attributeNames: names),
                name: text(udev_device_get_sysattr_value(device, "name"))?.trimmingWhitespace() ?? sysname,
                subsystem: subsystem, syspath: syspath, devnode: devnode, idPath: properties["ID_PATH"],
                sysfsDirectory: syspath, udevMountMatrix: properties["ACCEL_MOUNT_MATRIX"], properties: properties)
        default:
            return nil
        }
    }
}

extension String {
    func trimmingCharacters(of character: Character) -> String {
        var slice = Substring(self)
        while slice.first == character { slice.removeFirst() }
        while slice.last == character { slice.removeLast() }
        return String(slice)
    }
}
