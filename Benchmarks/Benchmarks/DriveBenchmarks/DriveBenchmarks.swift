// ordo-one/benchmark harness over the same scenarios as bench-counts (`swift package benchmark` from
// Benchmarks/). Allocation counts come from the malloc interposer; the `instructions` metric needs
// hardware performance counters (perf_event_open), which this machine does not have, so the
// instruction figures come from bench-counts under callgrind (scripts/bench.sh).
import BenchScenarios
import Benchmark

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.instructions, .mallocCountTotal, .wallClock], maxDuration: .seconds(2), maxIterations: 10_000)
    for scenario in scenarios {
        Benchmark(scenario.name) { benchmark, operation in
            for _ in benchmark.scaledIterations { operation() }
        } setup: {
            scenario.makeRunner()
        }
    }
}
