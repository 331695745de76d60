// swift-tools-version:6.1
// Benchmarks for carbridge's hot paths. A separate package that depends on the main package by path
// through the `CarbridgeModules` library product (like Fuzz/), so `swift build`/`swift test` and CI of the
// main package never build it. Run from the repository root: scripts/bench.sh (docs/performance.md).
//
// - BenchScenarios: the scenarios (the real code, set up once, one operation per call).
// - bench-counts: deterministic counts: heap allocations (malloc-interposer) and, under
//   `valgrind --tool=callgrind`, instructions.
// - DriveBenchmarks: the same scenarios under ordo-one/benchmark (`swift package benchmark`).
// - Thresholds/instructions.json: the recorded instructions per input event and per tick, which
//   `scripts/bench.sh --check` (CI's bench stage) holds the code to; `scripts/bench.sh --record` rewrites it.
import PackageDescription

let package = Package(
    name: "carbridge-benchmarks",
    dependencies: [
        // `name:` keeps the identity independent of the directory the repository was cloned into.
        .package(name: "carbridge", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer", exact: "1.6.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        .target(
            name: "BenchScenarios",
            dependencies: [
                .product(name: "CarbridgeModules", package: "carbridge"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "bench-counts",
            dependencies: [
                "BenchScenarios",
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]),
        .executableTarget(
            name: "DriveBenchmarks",
            dependencies: [
                "BenchScenarios",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/DriveBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v5]
)
