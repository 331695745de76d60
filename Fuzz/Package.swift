// swift-tools-version:6.0
// libFuzzer targets for carbridge's parsers of outside bytes. Built and run by scripts/fuzz.sh:
//   swift build --package-path Fuzz -c release --sanitize=fuzzer --sanitize=address --scratch-path .build-fuzz
// Each target is an executable whose LLVMFuzzerTestOneInput calls the real code; libFuzzer supplies main(),
// so these link only with -sanitize=fuzzer (this package is never part of the main package's build).
import PackageDescription

let fuzzTargets = [
    "FuzzEvemu", "FuzzConfig", "FuzzCarLines", "FuzzKeys", "FuzzInputEvents", "FuzzIIOValue", "FuzzLinkURL",
    // The dashboard's parsers of a browser's bytes (DriveWebProtocol: no Hummingbird to build).
    "FuzzClientMessage", "FuzzLoginForm", "FuzzJoinQuery", "FuzzCookie",
]

let package = Package(
    name: "carbridge-fuzz",
    products: fuzzTargets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [
        // A path dependency's identity is its directory's name, lower-cased: a checkout in a directory called
        // "fuzz" clashes with this package (scripts/fuzz.sh refuses to run there and says so).
        .package(name: "carbridge", path: ".."),
    ],
    targets: [
        // Invariant checks and input splitting shared by the targets.
        .target(name: "FuzzSupport"),
    ] + fuzzTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: ["FuzzSupport", .product(name: "CarbridgeModules", package: "carbridge")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    },
    // Harness code with process-wide state (one event loop, cached settings): Swift 5 mode keeps it simple.
    swiftLanguageModes: [.v5]
)
