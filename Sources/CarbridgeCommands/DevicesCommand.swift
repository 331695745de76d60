import ArgumentParser
import DriveConfig
import DriveInput
import DriveRuntime
import DriveSystem

/// `carbridge devices`: what input devices carbridge can see.
struct DevicesCommand: CarbridgeCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the input devices carbridge can see: class, vendor:product, node, readable, name.",
        discussion: """
            Classes: gamepad, accelerometer (evdev, e.g. a DualSense "Motion Sensors" node), \
            iio-accelerometer, keyboard (arcade buttons and foot pedals are keyboards), other. \
            A gamepad's layout says where its buttons come from: standard (a GameControllerDB entry, \
            built in or yours: [devices] mapping_db, SDL_GAMECONTROLLERCONFIG), or the kernel's codes. \
            With --config, each device also shows which [devices] entry would pick it. A device that is \
            not readable needs udev/70-carbridge.rules (see docs/deployment.md, "Permissions").
            """)

    @OptionGroup var common: CommonOptions

    func run() throws {
        let config = try common.loadConfig()
        let listings = DeviceCatalog.list()
        let all = listings.map(\.descriptor)
        let picks = DevicePicker(config: config).picks(among: all)
        let layouts = try PadLayoutResolver(config: config)
        let loop = try EventLoop(clock: .manual)
        let text = DeviceCatalog.format(listings, pickedBy: { device in picks[device.syspath] ?? [] }) { device in
            // A pad's layout needs its capabilities: open it (read-only, not grabbed) when we may.
            guard device.deviceClass == .gamepad, let node = device.devnode,
                let pad = try? EvdevDevice(path: node, loop: loop)
            else { return nil }
            defer { pad.close() }
            let resolution = layouts.resolve(pad.info)
            // A wheel has no DB layout: say what it is, and where its mapping comes from.
            let wheel = RacingWheels.model(vendor: device.vendor, product: device.product).map {
                "\n    wheel   \($0.name): [steering] source = \"wheel\" (see config/wheel.toml)"
            } ?? ""
            return resolution.layout.summary + wheel + (resolution.notice.map { "\n    note    \($0)" } ?? "")
        }
        say(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }
}
