import DriveDBus

/// The answers carbridge's `org.bluez.Agent1` gives while it pairs a car (pure logic; `BlueZClient`
/// exports it on the bus).
///
/// An HC-05 is a Bluetooth 2.0 module: legacy pairing, bluetoothd asks `RequestPinCode` and the PIN
/// goes back. Newer modules (HC-06 clones, ESP32) use Secure Simple Pairing: `RequestConfirmation`
/// is confirmed (there is nobody at the car to compare a number with), `RequestPasskey` gets the
/// PIN as a number. Only requests for the device being paired are answered; anything else is
/// rejected, so carbridge never pairs something it was not asked to.
package struct PairingAgent: Sendable {
    /// The PIN to give (`1234` for most HC-05 modules, `0000` for some).
    package var pin: String
    /// The object path of the device being paired (nil: answer for any device).
    package var devicePath: String?

    package init(pin: String, devicePath: String?) {
        self.pin = pin
        self.devicePath = devicePath
    }

    /// What happened, for the report.
    package enum Event: Equatable, Sendable {
        case gavePIN(String)
        case gavePasskey(UInt32)
        case confirmed(UInt32)
        case displayed(String)
        case authorized(String)
        case rejected(String)
        case cancelled
        case released
    }

    /// An agent method's answer.
    package enum Reply: Equatable, Sendable {
        case values([DBusValue])
        case error(DBusError)
        case unknownMethod
    }

    static let rejected = "org.bluez.Error.Rejected"

    /// The answer to `member(arguments)` on `org.bluez.Agent1`, and what to report.
    package func answer(member: String, arguments: [DBusValue]) -> (Reply, Event?) {
        let device = arguments.first?.string
        func mine() -> Bool { devicePath == nil || device == devicePath }
        func reject(_ why: String) -> (Reply, Event?) {
            (.error(DBusError(name: Self.rejected, message: why)), .rejected("\(member)(\(device ?? ""))"))
        }
        switch member {
        case "RequestPinCode":
            guard mine() else { return reject("carbridge is not pairing this device") }
            return (.values([.string(pin)]), .gavePIN(pin))
        case "RequestPasskey":
            guard mine() else { return reject("carbridge is not pairing this device") }
            guard let number = UInt32(pin), number <= 999_999 else {
                return reject("the PIN \(pin) is not a passkey (at most six digits)")
            }
            return (.values([.uint32(number)]), .gavePasskey(number))
        case "RequestConfirmation":
            guard mine() else { return reject("carbridge is not pairing this device") }
            let passkey = UInt32(clamping: arguments.dropFirst().first?.integer ?? 0)
            return (.values([]), .confirmed(passkey))
        case "RequestAuthorization":
            guard mine() else { return reject("carbridge is not pairing this device") }
            return (.values([]), .authorized("pairing"))
        case "AuthorizeService":
            guard mine() else { return reject("carbridge is not pairing this device") }
            return (.values([]), .authorized(arguments.dropFirst().first?.string ?? ""))
        case "DisplayPinCode":
            return (.values([]), .displayed(arguments.dropFirst().first?.string ?? ""))
        case "DisplayPasskey":
            return (.values([]), .displayed(String(arguments.dropFirst().first?.integer ?? 0)))
        case "Cancel":
            return (.values([]), .cancelled)
        case "Release":
            return (.values([]), .released)
        default:
            return (.unknownMethod, nil)
        }
    }
}

/// One sentence for a failed `Device1.Pair` (or `Connect`), saying what went wrong and what to do.
package enum PairingFailure {
    package static func sentence(_ error: DBusError, device: String, pin: String) -> String {
        let text = error.message.lowercased()
        switch error.name {
        case "org.bluez.Error.AuthenticationFailed":
            let other = pin == "1234" ? "0000" : "1234"
            return "pairing with \(device) failed: wrong PIN (the car did not accept \(pin)); HC-05 modules use 1234 or 0000: try --pin \(other)"
        case "org.bluez.Error.AuthenticationRejected":
            return "pairing with \(device) failed: the car rejected the pairing (is it already paired with another phone, or in AT mode?)"
        case "org.bluez.Error.AuthenticationCanceled":
            return "pairing with \(device) failed: the pairing was cancelled (the car or bluetoothd gave up)"
        case "org.bluez.Error.AuthenticationTimeout":
            return "pairing with \(device) failed: the car did not answer the PIN request in time"
        case "org.bluez.Error.ConnectionAttemptFailed":
            if text.contains("page timeout") || text.contains("timeout") || text.contains("host is down") {
                return "pairing with \(device) failed: the car is not in range or switched off (no answer to the connection)"
            }
            return "pairing with \(device) failed: could not connect to it (\(error.message)); is it switched on and within range?"
        case "org.bluez.Error.AlreadyExists":
            return "\(device) is already paired"
        case "org.bluez.Error.InProgress":
            return "pairing with \(device) failed: another pairing with it is in progress"
        case "org.bluez.Error.DoesNotExist", "org.freedesktop.DBus.Error.UnknownObject":
            return "pairing with \(device) failed: bluetoothd no longer knows it (it went out of range): run `carbridge scan` again"
        case "org.freedesktop.DBus.Error.NoReply":
            return "pairing with \(device) failed: bluetoothd did not finish within the time limit (car out of range?)"
        default:
            if text.contains("page timeout") || text.contains("host is down") {
                return "pairing with \(device) failed: the car is not in range or switched off"
            }
            return "pairing with \(device) failed: \(error)"
        }
    }
}
