import ArgumentParser
import DriveLink

/// `carbridge scan`: find Bluetooth cars nearby.
struct ScanCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Search for Bluetooth devices (classic inquiry) and print their addresses and names.",
        discussion: """
            Prints one line per device: "AA:BB:CC:DD:EE:FF  Name". Use the address in \
            --link rfcomm://AA:BB:CC:DD:EE:FF. Pair the car once first (`bluetoothctl pair ADDR`). \
            Needs an adapter that is up; inquiry may need root or CAP_NET_RAW.
            """)

    @Option(name: .long, help: ArgumentHelp("The adapter to scan with, e.g. hci0 (default: the first one up).", valueName: "name"))
    var adapter: String?

    @Option(name: .long, help: ArgumentHelp("How long to search, 2…60 seconds.", valueName: "seconds"))
    var seconds: Int = 6

    @Flag(name: .long, help: "Do not ask each device for its name (faster).")
    var noNames = false

    func validate() throws {
        if !(2...60).contains(seconds) { throw ValidationError("--seconds: \(seconds) must be between 2 and 60") }
    }

    func run() throws {
        let devices = try BluetoothScanner.scan(adapter: adapter, seconds: seconds, readNames: !noNames)
        if devices.isEmpty {
            say("no Bluetooth devices answered within \(seconds) s (is the car switched on and discoverable?)")
        }
        for device in devices { say("\(device.address)  \(device.name ?? "(no name)")") }
    }
}
