import DriveSystem

/// Why an input device could not be opened or read; every description says what to do next.
public enum InputDeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The node does not exist (unplugged, or a wrong path).
    case notFound(path: String)
    /// The node exists but this user may not read it (after the ACL retry window).
    case permissionDenied(path: String, owner: String)
    /// The node is not an evdev device libevdev can use.
    case notAnEvdevDevice(path: String, reason: String)
    /// Grabbing (`EVIOCGRAB`) failed, usually because another program already grabbed it.
    case grabFailed(path: String, reason: String)
    /// Another system call failed.
    case system(SystemError)

    public var description: String {
        switch self {
        case .notFound(let path):
            return "\(path) does not exist: the device was unplugged or the path is wrong (run `carbridge devices` to list what carbridge sees)"
        case .permissionDenied(let path, let owner):
            return """
                carbridge may not read \(path) (permission denied; the node belongs to \(owner)). \
                Install the udev rule so the seat user (uaccess) or the `carbridge` group can read gamepads and accelerometers: \
                sudo cp udev/70-carbridge.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger; \
                for a system service also run `sudo groupadd -r carbridge && sudo usermod -aG carbridge USER` \
                (or add the user to the `input` group) and log in again
                """
        case .notAnEvdevDevice(let path, let reason):
            return "\(path) is not an evdev input device libevdev can read (\(reason)); pick an /dev/input/eventN node of the device (see `carbridge devices`)"
        case .grabFailed(let path, let reason):
            return "could not grab \(path) for exclusive use (\(reason)); another program may have grabbed it — close it, or set grab = false in the config"
        case .system(let error):
            return "\(error)"
        }
    }
}
