import DriveCore

/// The HID devices no driver took. A game pad's kernel driver (hid-playstation, hid-sony, hid-nintendo, …)
/// asks the device for its calibration or pairing data before it makes any input node; a device that answers
/// wrongly (or a driver module that is missing, since hid-generic leaves such devices to their own driver) ends
/// with a HID device and no node, which carbridge would otherwise never hear of. Pure: feed it the `hid`
/// subsystem's udev events and the clock, and it says which devices stayed unbound past `grace`.
public struct UnboundHidDevices {
    /// How long a driver may take to bind after the device appears (its probe waits for the device's answers).
    public let grace: Duration
    private var waiting: [String: (event: HidDeviceEvent, deadline: Instant)] = [:]

    /// A watch that reports devices still unbound `grace` after they appeared.
    public init(grace: Duration = .seconds(6)) {
        self.grace = grace
    }

    /// Takes one udev event.
    public mutating func handle(_ event: HidDeviceEvent, at now: Instant) {
        switch event.action {
        case .add:
            if event.driver == nil { waiting[event.syspath] = (event, now + grace) } else { waiting[event.syspath] = nil }
        case .bind, .remove:
            waiting[event.syspath] = nil
        case .unbind:
            break
        }
    }

    /// True when `device` is still there and no driver is bound to it (its sysfs `driver` link is absent).
    public static func isStillUnbound(_ device: HidDeviceEvent) -> Bool {
        SysfsFile.exists(device.syspath) && !SysfsFile.exists(device.syspath + "/driver")
    }

    /// When the next device's grace ends; nil when none is waiting.
    public var nextDeadline: Instant? { waiting.values.map(\.deadline).min() }

    /// The devices whose grace ended by `now` (each reported once), in syspath order.
    public mutating func expired(at now: Instant) -> [HidDeviceEvent] {
        let due = waiting.filter { $0.value.deadline <= now }
        for syspath in due.keys { waiting[syspath] = nil }
        return due.values.map(\.event).sorted { $0.syspath < $1.syspath }
    }
}
