import ArgumentParser
import DriveBluetooth
import DriveRuntime
import DriveSystem

/// `carbridge scan`: find Bluetooth cars nearby.
struct ScanCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Search for Bluetooth devices (classic and Low Energy) and print their addresses and names.",
        discussion: """
            Through bluetoothd (D-Bus; any user may) when it runs: one line per device as it is found, \
            "AA:BB:CC:DD:EE:FF  Name  [RSSI -52 dBm, bredr, paired, trusted, serial port]" or \
            "C8:FD:19:12:34:56  HMSoft  [RSSI -60 dBm, le, HM-10 UART]": "bredr" (classic Bluetooth, \
            as an HC-05), "le" (Bluetooth Low Energy) or "le+bredr" as far as the device's properties \
            tell; "serial port": it offers the Serial Port service, UUID 0x1101, known once paired; \
            "HM-10 UART", "Nordic UART", "Microchip transparent UART": a BLE car module. An HC-05 tells \
            its name about 10 s into the search, so the default is 12 s. Without bluetoothd, a raw HCI \
            inquiry (classic devices only; may need root or CAP_NET_RAW) prints "AA:BB:CC:DD:EE:FF  Name". \
            Lines on stderr say which way was used and, for each BLE car found, the link to drive it \
            with. Then: carbridge pair NAME, carbridge run --link rfcomm://NAME (or ble://NAME).
            """)

    @Option(name: .long, help: ArgumentHelp("The adapter to scan with, e.g. hci1 (default: the first one).", valueName: "name"))
    var adapter: String?

    @Option(name: .long, help: ArgumentHelp("How long to search, 2…60 seconds (default 12 through bluetoothd, 6 raw).", valueName: "seconds"))
    var seconds: Int?

    @Flag(name: .long, help: "Raw inquiry only: do not ask each device for its name (faster).")
    var noNames = false

    @Flag(name: .long, help: "Use the raw HCI inquiry even when bluetoothd runs (classic devices only).")
    var raw = false

    @Flag(name: .long, help: """
        Only Bluetooth Low Energy devices (HM-10, Nordic UART cars): bluetoothd discovers over LE only \
        (needs bluetoothd: the raw inquiry finds classic devices only). With --bredr: both, the default.
        """)
    var le = false

    @Flag(name: .long, help: """
        Only classic Bluetooth (BR/EDR) devices (HC-05, HC-06): bluetoothd discovers over BR/EDR only. \
        With --le: both, the default.
        """)
    var bredr = false

    /// What `--le` and `--bredr` ask for; empty (neither, or both): every device, bluetoothd's `auto`.
    var transport: BluetoothTransports {
        le == bredr ? [] : le ? .le : .bredr
    }

    func validate() throws {
        if let seconds, !(2...60).contains(seconds) { throw ValidationError("--seconds: \(seconds) must be between 2 and 60") }
        if raw && transport == .le {
            throw ValidationError("--raw and --le: the raw HCI inquiry finds classic (BR/EDR) devices only; an LE scan needs bluetoothd")
        }
    }

    func run() throws {
        if !raw {
            do {
                let wait = seconds ?? 12
                var found: [BluetoothDevice] = []
                _ = try BluetoothTool.scan(adapterName: adapter, seconds: wait, transport: transport, found: { device in
                    found.append(device)
                    say(BluetoothTool.line(device))
                }, started: { adapter in
                    note("scan: through bluetoothd on \(adapter.name) (\(adapter.address)) for \(wait) s\(Self.only(transport))")
                })
                if found.isEmpty {
                    say("no \(Self.kind(transport))devices answered within \(wait) s (is the car switched on and discoverable?)")
                }
                for suggestion in BluetoothTool.bleSuggestions(found) { note("scan: \(suggestion)") }
                return
            } catch {
                guard error.noBluetoothd else { throw CarbridgeError(error.description) }
                if transport == .le {
                    throw CarbridgeError(
                        "scan --le: \(error.description); an LE scan needs bluetoothd (the raw HCI inquiry finds classic "
                            + "devices only): start it (`systemctl start bluetooth`)")
                }
                note("scan: \(error.description); using a raw HCI inquiry instead (classic devices only: BLE cars need bluetoothd)")
            }
        }
        let wait = seconds ?? 6
        note("scan: through a raw HCI inquiry\(adapter.map { " on \($0)" } ?? "") for \(wait) s")
        let devices = try BluetoothScanner.scan(adapter: adapter, seconds: wait, readNames: !noNames)
        if devices.isEmpty {
            say("no classic Bluetooth devices answered within \(wait) s (is the car switched on and discoverable?)")
        }
        for device in devices { say("\(device.address)  \(device.name ?? "(no name)")") }
    }
}

extension ScanCommand {
    /// ` (LE only)`, ` (BR/EDR only)` or nothing: for the line that says how the scan runs.
    static func only(_ transport: BluetoothTransports) -> String {
        transport == .le ? " (LE only)" : transport == .bredr ? " (BR/EDR only)" : ""
    }

    /// `Bluetooth LE `, `classic Bluetooth ` or `Bluetooth `: what found nothing.
    static func kind(_ transport: BluetoothTransports) -> String {
        transport == .le ? "Bluetooth LE " : transport == .bredr ? "classic Bluetooth " : "Bluetooth "
    }
}

/// `carbridge pair`: pair a car through bluetoothd with a PIN.
struct PairCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a Bluetooth car (by address or name) through bluetoothd, and trust it.",
        discussion: """
            carbridge registers its own pairing agent with bluetoothd for the time of the pairing: it \
            answers the car's PIN request (legacy pairing, as an HC-05 does) with --pin and confirms \
            Secure Simple Pairing where the car asks for it; a passkey request (a BLE module with a \
            passkey set, HM-10: 000000) gets --pin as a number. A name that bluetoothd does not know yet is \
            searched for first (up to --seconds, classic and LE). On failure one sentence says what went wrong: wrong \
            PIN, not in range, rejected. Any user may pair through bluetoothd. The last line says how to \
            drive the car: rfcomm://NAME, or ble://NAME for a BLE car (HM-10, Nordic UART).
            """)

    @Argument(help: ArgumentHelp("The car: its address (98:D3:31:F5:2A:11) or its name (HC-05).", valueName: "address-or-name"))
    var target: String

    @Option(name: .long, help: ArgumentHelp("The PIN the car expects (HC-05: 1234, some 0000).", valueName: "pin"))
    var pin: String = "1234"

    @Option(name: .long, help: ArgumentHelp("The adapter to pair through, e.g. hci1 (default: where the car was found).", valueName: "name"))
    var adapter: String?

    @Option(name: .long, help: ArgumentHelp("How long to search for a car bluetoothd does not know yet, 0…120 s.", valueName: "seconds"))
    var seconds: Int = 30

    func validate() throws {
        if pin.isEmpty || pin.utf8.count > 16 || !pin.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            throw ValidationError("--pin: \"\(pin)\" must be 1 to 16 characters without spaces (HC-05: 1234)")
        }
        if !(0...120).contains(seconds) { throw ValidationError("--seconds: \(seconds) must be between 0 and 120") }
    }

    func run() throws {
        do {
            try BluetoothTool.pair(target, pin: pin, adapterName: adapter, searchSeconds: seconds) { say($0) }
        } catch {
            if error.noBluetoothd {
                throw CarbridgeError("pairing needs bluetoothd, which is not running: start it (`systemctl start bluetooth`)")
            }
            throw CarbridgeError(error.description)
        }
    }
}

/// `carbridge unpair`: forget a paired car.
struct UnpairCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair",
        abstract: "Remove the pairing with a Bluetooth car (by address or name) through bluetoothd.")

    @Argument(help: ArgumentHelp("The car: its address or its name.", valueName: "address-or-name"))
    var target: String

    @Option(name: .long, help: ArgumentHelp("Only look on this adapter, e.g. hci1.", valueName: "name"))
    var adapter: String?

    func run() throws {
        do {
            try BluetoothTool.unpair(target, adapterName: adapter) { say($0) }
        } catch {
            if error.noBluetoothd {
                throw CarbridgeError("unpairing needs bluetoothd, which is not running: start it (`systemctl start bluetooth`)")
            }
            throw CarbridgeError(error.description)
        }
    }
}

/// Writes one line to stderr (progress that is not a result).
func note(_ line: String) {
    _ = BoundedWriter.standardError.write("carbridge: \(line)")
}
