import Glibc

/// An error reply (or a local failure) in D-Bus terms: `org.bluez.Error.AuthenticationFailed` and its text.
package struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error name.
    package var name: String
    /// Its human-readable message.
    package var message: String

    /// An error named `name` with `message`.
    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// A local failure of the sd-bus call `call` with a negative errno.
    package init(call: String, errno code: Int32) {
        self.name = "carbridge.Error.Local"
        self.message = "\(call): \(String(cString: strerrorText(code)))"
    }

    /// `name: message`, or the name alone.
    package var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// True when nobody owns the destination (no bluetoothd on the bus; the bus could not start it
    /// either: `Spawn.*`, e.g. a disabled bluetooth.service) or the bus itself is missing.
    package var meansServiceMissing: Bool {
        name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
            || name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") || name == "carbridge.Error.NoBus"
    }
}

func strerrorText(_ code: Int32) -> UnsafeMutablePointer<CChar> { strerror(code < 0 ? -code : code) }
