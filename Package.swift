// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "carbridge",
    products: [
        .executable(name: "carbridge", targets: ["carbridge"]),
        .executable(name: "carbridge-dashboard", targets: ["carbridge-dashboard"]),
        // The modules, for the libFuzzer targets in Fuzz/ (a separate package that depends on this one
        // by path, so a plain `swift build`/`swift test` here never builds or links a fuzz target).
        .library(
            name: "CarbridgeModules",
            targets: [
                "DriveCore", "DriveInputModel", "DriveMapping", "DriveSystem", "DriveLinkModel", "DriveLink", "DriveInput",
                "DriveConfig", "DriveView",
                "DriveTerminal", "DriveRuntime", "DriveDBus", "DriveBluetooth", "DriveWebProtocol",
            ]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // The web dashboard (DriveDashboard only; `traits: []` leaves out Hummingbird's full Foundation and
        // swift-configuration).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // DriveDashboard imports NIOCore/NIOPosix and HTTPTypes itself (Hummingbird brings them in already:
        // these name what the dashboard's own code uses, at the versions Hummingbird resolves to).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The dashboard's HTTPS (`[dashboard] tls`): swift-nio-ssl serves it, swift-certificates and swift-crypto
        // make and read its certificate. DriveDashboard only, like Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
    ],
    targets: [
        // Thin system-library modules: module map + shim.h only (CSDBus, below, is a C target).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(
            name: "CEvdev", path: "Sources/CEvdev", pkgConfig: "libevdev",
            providers: [.apt(["libevdev-dev"])]),
        .systemLibrary(
            name: "CUdev", path: "Sources/CUdev", pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]),
        .systemLibrary(
            name: "CBluetooth", path: "Sources/CBluetooth", pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]),
        // libqrencode: the dashboard's join QR code (DriveDashboard only, so `carbridge` never links it).
        .systemLibrary(
            name: "CQRencode", path: "Sources/CQRencode", pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]),
        // sd-bus, forwarded to libsystemd.so.0 loaded on first use (dlopen): only D-Bus (BlueZ) needs it, and
        // linking it mapped seven libraries at every start. Needs libsystemd-dev's header only.
        .target(name: "CSDBus", path: "Sources/CSDBus"),

        // Pure logic: no I/O, no Foundation.
        .target(name: "DriveCore"),
        // The seam between the input devices and the mapping: what a device reports (`InputFrame`, its
        // `EventCode`s, an acceleration as a `Vector3`), what it is used for (`DeviceRole`), how the config
        // picks one (`DeviceMatch`) and how it is mounted (`MountMatrix`). DriveInput and DriveMapping both
        // build on it; neither imports the other.
        .target(name: "DriveInputModel", dependencies: ["DriveCore"]),
        // What every view of a run reads (`RunSnapshot`, the join invitation): the live view, the dashboard
        // and the systemd status line, none depending on another.
        .target(name: "DriveView", dependencies: ["DriveCore"]),
        .target(name: "DriveMapping", dependencies: ["DriveCore", "DriveInputModel"]),

        // What a browser sends the dashboard, parsed: the WebSocket's messages (`ClientMessage`), the login
        // form and a request's query (`URLEncodedForm`), the `Cookie` header. Pure and free of Hummingbird, so
        // the fuzz targets reach these parsers through CarbridgeModules without building the web stack.
        .target(name: "DriveWebProtocol", dependencies: ["DriveCore"]),

        // What a link is, as values (its URL, endpoint and options): pure, so the config needs no I/O module.
        .target(name: "DriveLinkModel"),

        // System plumbing: syscall wrappers, the epoll event loop.
        .target(name: "DriveSystem", dependencies: ["DriveCore", "CLinux"]),
        // The car links: `LinkSupervisor` (the lifecycle every link shares, pure) and `SupervisedLink` (its
        // shell) over a `LinkTransport`; the stream transports (TCP, serial, RFCOMM) and `StdoutLink`.
        .target(
            name: "DriveLink",
            dependencies: ["DriveCore", "DriveLinkModel", "DriveSystem", "CLinux", "CBluetooth"]),
        // A general D-Bus client: sd-bus driven by the event loop (calls, signal matches, exported objects) and
        // the D-Bus values it reads and writes. Knows nothing of BlueZ.
        .target(name: "DriveDBus", dependencies: ["DriveCore", "DriveSystem", "CSDBus"]),
        // Bluetooth: BlueZ through D-Bus (discovery, pairing with an agent, name → address), the raw SDP query
        // for a device's Serial Port channel, the raw HCI inquiry (`carbridge scan` without bluetoothd), and the
        // BLE link (`BLETransport` under DriveLink's `LinkSupervisor`: a GATT UART car through bluetoothd).
        // The RFCOMM link stays in DriveLink.
        .target(
            name: "DriveBluetooth",
            dependencies: ["DriveCore", "DriveSystem", "DriveLink", "DriveDBus", "CBluetooth", "CLinux"]),
        // The simulated car (`carbridge car-sim`, `link.url = "sim"`, tests): the car's side of the protocol.
        .target(name: "CarSim", dependencies: ["DriveCore", "DriveSystem", "DriveLink", "CLinux"]),
        .target(
            name: "DriveInput",
            dependencies: ["DriveCore", "DriveInputModel", "DriveSystem", "CLinux", "CEvdev", "CUdev"]),
        // toml++ (Debian's libtomlplusplus-dev) behind a small C API: a C++ source compiled with the library
        // header-only, so the binary has no libtomlplusplus (and no Foundation, which TOMLKit's Swift layer
        // pulled in) at run time, and no Swift module needs C++ interoperability (which every importer
        // would have to turn on too).
        .target(
            name: "CTOMLReader",
            cxxSettings: [
                .define("TOML_HEADER_ONLY", to: "1"),
                .define("TOML_EXCEPTIONS", to: "0"),
                .define("TOML_ENABLE_FORMATTERS", to: "0"),
            ]),
        // The config file: TOML → typed, validated values (parsed once, every problem as file:line), the editor.
        .target(
            name: "DriveConfig",
            dependencies: ["DriveCore", "DriveInputModel", "DriveMapping", "DriveSystem", "DriveLinkModel", "CTOMLReader"]),
        // The terminal: raw mode, key decoding, keyboard controls, the screen, the live view and the
        // monitor's text. Knows nothing of the bridge or the session (DriveRuntime wires it).
        .target(
            name: "DriveTerminal",
            dependencies: ["DriveCore", "DriveInputModel", "DriveMapping", "DriveView", "DriveSystem", "CLinux"]),
        .target(
            name: "DriveRuntime",
            dependencies: [
                "DriveCore", "DriveInputModel", "DriveMapping", "DriveSystem", "DriveLink", "DriveInput", "DriveConfig",
                "DriveTerminal", "DriveView", "CLinux", "DriveBluetooth",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The web dashboard and /metrics (`[dashboard]`, `run --dashboard`): Hummingbird on its own threads,
        // snapshots out and controls in through the event loop's mailbox. Only `carbridge-dashboard` links it (not
        // CarbridgeModules), so the fuzz and benchmark packages never build Hummingbird.
        .target(
            name: "DriveDashboard",
            dependencies: [
                "DriveCore", "DriveSystem", "DriveLink", "DriveLinkModel", "DriveConfig", "DriveRuntime", "DriveBluetooth",
                "DriveInputModel", "DriveMapping", "DriveView", "DriveWebProtocol", "CQRencode",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Every command of the program; the two executables below are a `main` each.
        .target(
            name: "CarbridgeCommands",
            dependencies: [
                "DriveRuntime", "DriveConfig", "DriveCore", "DriveInputModel", "DriveMapping", "DriveLink", "CarSim",
                "DriveInput", "DriveSystem", "DriveBluetooth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // `carbridge`, without the dashboard's code: a run with the dashboard on execs `carbridge-dashboard`
        // (CarbridgeCommands/DashboardBuild.swift), so a run without it never pays for Hummingbird and NIO.
        .executableTarget(
            name: "carbridge",
            dependencies: ["CarbridgeCommands"]),
        // `carbridge-dashboard`: the same commands with the web dashboard linked in (installed in
        // /usr/libexec/carbridge/).
        .executableTarget(
            name: "carbridge-dashboard",
            dependencies: ["CarbridgeCommands", "DriveDashboard", "DriveInput"]),

        .testTarget(name: "DriveCoreTests", dependencies: ["DriveCore"]),
        .testTarget(name: "DriveWebProtocolTests", dependencies: ["DriveWebProtocol", "DriveCore"]),
        .testTarget(name: "DriveMappingTests", dependencies: ["DriveMapping", "DriveInputModel", "DriveCore"]),
        .testTarget(name: "DriveSystemTests", dependencies: ["DriveSystem", "DriveCore", "CLinux"]),
        // Helpers the test targets share (spin a loop until, record a link).
        .target(name: "DriveTestSupport", dependencies: ["DriveCore", "DriveSystem", "DriveLink", "CLinux"], path: "Tests/DriveTestSupport"),
        .testTarget(
            name: "DriveLinkTests",
            dependencies: ["DriveLink", "DriveCore", "DriveSystem", "CLinux", "DriveTestSupport"]),
        .testTarget(
            name: "DriveDBusTests",
            dependencies: ["DriveDBus", "DriveCore", "DriveSystem", "DriveTestSupport"]),
        .testTarget(
            name: "DriveBluetoothTests",
            dependencies: ["DriveBluetooth", "DriveCore", "DriveDBus", "DriveLink", "DriveSystem", "DriveTestSupport"]),
        .testTarget(
            name: "CarSimTests",
            dependencies: ["CarSim", "DriveLink", "DriveCore", "DriveSystem", "DriveTestSupport", "CLinux"]),
        .testTarget(
            name: "DriveInputTests",
            dependencies: ["DriveInput", "DriveInputModel", "DriveMapping", "DriveCore", "DriveSystem", "CLinux", "DriveTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "DriveConfigTests",
            dependencies: ["DriveConfig", "DriveCore", "DriveInputModel", "DriveMapping", "DriveInput"]),
        .testTarget(
            name: "DriveRuntimeTests",
            dependencies: [
                "DriveRuntime", "DriveConfig", "DriveCore", "DriveSystem", "DriveLink", "CarSim", "DriveInput", "DriveTerminal",
                "DriveInputModel", "DriveMapping", "DriveTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "DriveTerminalTests",
            dependencies: ["DriveTerminal", "DriveCore", "DriveInputModel", "DriveMapping", "DriveInput", "DriveView"]),
        .testTarget(
            name: "DriveDashboardTests",
            dependencies: [
                "DriveDashboard", "DriveCore", "DriveSystem", "DriveConfig", "DriveRuntime", "DriveLink", "DriveBluetooth",
                "DriveInputModel", "DriveMapping", "DriveView", "DriveWebProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["CLinux"],
            exclude: ["Fixtures"]),
    ],
    // toml++ 3 is C++17.
    cxxLanguageStandard: .cxx17
)
