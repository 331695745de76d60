// ordo-one/benchmark harness over the same scenarios as bench-counts (`swift package benchmark` from
// Benchmarks/). Allocation counts come from the malloc interposer; the `instructions` metric needs
// hardware performance counters (perf_event_open), which this machine does not have, so the
// instruction figures come from bench-counts under callgrind (scripts/bench.sh).
import BenchScenarios
import Benchmark

let benchmarks: @Sendable () -> Void = {
    for scenario in scenarios {
        // Cheap operations run 1000 to a sample (.kilo: figures are per operation, the harness's own
        // allocations amortised away); the evemu and config ones are one operation per sample.
        let heavy = scenario.unitsPerOperation > 1 || scenario.unit == "load"
        let configuration = Benchmark.Configuration(
            metrics: [.instructions, .mallocCountTotal, .wallClock], scalingFactor: heavy ? .one : .kilo,
            maxDuration: .seconds(2), maxIterations: heavy ? 50 : 1_000)
        Benchmark(scenario.name, configuration: configuration) { benchmark, operation in
            for _ in benchmark.scaledIterations { operation() }
        } setup: {
            scenario.makeRunner()
        }
    }
}
