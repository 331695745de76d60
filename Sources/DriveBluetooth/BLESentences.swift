import DriveDBus

/// The sentences a BLE link gives for bluetoothd's error replies: what failed and what to do.
enum BLESentences {
    /// One sentence for `error`, the reply to an attempt to `doing` ("connect to HMSoft (…)").
    static func busFailure(_ error: DBusError, doing: String) -> String {
        if error.meansServiceMissing {
            return "cannot \(doing): bluetoothd is not running (start it: `systemctl start bluetooth`)"
        }
        switch error.name {
        case "org.freedesktop.DBus.Error.AccessDenied":
            return "cannot \(doing): the D-Bus policy does not let this user talk to bluetoothd (\(error.message))"
        case "org.freedesktop.DBus.Error.NoReply":
            return "cannot \(doing): bluetoothd did not answer in time"
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod":
            return "cannot \(doing): bluetoothd no longer has that object (the car went away)"
        case "org.bluez.Error.NotReady":
            return "cannot \(doing): the Bluetooth adapter is not powered (`bluetoothctl power on`)"
        case "org.bluez.Error.NotPermitted", "org.bluez.Error.NotAuthorized":
            return "cannot \(doing): the car refused (\(error.message)); if it needs pairing, run `carbridge pair NAME --pin PIN`"
        default:
            return "cannot \(doing): \(error.message.isEmpty ? error.name : error.message)"
        }
    }
}
