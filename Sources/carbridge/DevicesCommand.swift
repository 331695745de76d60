import ArgumentParser
import DriveConfig
import DriveInput
import DriveRuntime

/// `carbridge devices`: what input devices carbridge can see.
struct DevicesCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the input devices carbridge can see: class, vendor:product, node, readable, name.",
        discussion: """
            Classes: gamepad, accelerometer (evdev, e.g. a DualSense "Motion Sensors" node), \
            iio-accelerometer, keyboard (arcade buttons and foot pedals are keyboards), other. \
            With --config, each device also shows which [devices] entry would pick it. A device that is \
            not readable needs udev/70-carbridge.rules (see docs/deployment.md, "Permissions").
            """)

    @OptionGroup var common: CommonOptions

    func run() throws {
        let config = try common.loadConfig()
        let listings = DeviceCatalog.list()
        let all = listings.map(\.descriptor)
        let picks = DevicePicker(config: config).picks(among: all)
        let text = DeviceCatalog.format(listings) { device in picks[device.syspath] ?? [] }
        say(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }
}
