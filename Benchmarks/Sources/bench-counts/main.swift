// Deterministic counts for the carbridge benchmarks (see docs/performance.md, and scripts/bench.sh):
//   bench-counts list                      the scenarios: name, unit, units per operation
//   bench-counts run NAME ITERATIONS       set up, warm up, then ITERATIONS operations; prints the heap
//                                          allocations of those operations (malloc-interposer counts)
//   bench-counts allocs NAME LOW HIGH      steady-state allocations per unit: set up, warm up, LOW
//                                          operations, then HIGH − LOW more; (mallocs of the second
//                                          stretch) / (HIGH − LOW) / units per operation
//   bench-counts check [--short]           the CI guard: every per-input-event and per-tick scenario must
//                                          allocate nothing in steady state (budget 0); prints one line per
//                                          scenario and `bench: N passed, N failed`, exits 1 on a failure
// Instructions come from running `run` under `valgrind --tool=callgrind` with two iteration counts:
// the difference divided by the difference in iterations is the cost of one operation, without setup.
import BenchScenarios
import MallocInterposerSwift
#if canImport(Glibc)
import Glibc
#endif

/// Mallocs during `count` operations (hooked only around them).
func mallocs(_ operation: () -> Void, count: Int) -> Int {
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    for _ in 0..<count { operation() }
    MallocInterposerSwift.unhook()
    return MallocInterposerSwift.getStatistics().mallocCount
}

/// Steady-state allocations per unit of `scenario`: the mallocs of operations LOW+1…HIGH only.
func steadyAllocations(_ scenario: Scenario, low: Int, high: Int) -> (perUnit: Double, total: Int) {
    let operation = scenario.makeRunner()
    _ = mallocs(operation, count: low)
    let extra = mallocs(operation, count: high - low)
    return (Double(extra) / Double(high - low) / Double(scenario.unitsPerOperation), extra)
}

func find(_ name: String) -> Scenario {
    guard let scenario = scenarios.first(where: { $0.name == name }) else {
        print("unknown scenario \(name); `bench-counts list` names them")
        exit(64)
    }
    return scenario
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "list":
    for scenario in scenarios { print("\(scenario.name)\t\(scenario.unit)\t\(scenario.unitsPerOperation)") }
case "run" where arguments.count == 3:
    let scenario = find(arguments[1])
    guard let iterations = Int(arguments[2]) else { print("bad count"); exit(64) }
    let operation = scenario.makeRunner()
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    for _ in 0..<iterations { operation() }
    MallocInterposerSwift.unhook()
    let stats = MallocInterposerSwift.getStatistics()
    print("\(scenario.name)\titerations=\(iterations)\tmallocs=\(stats.mallocCount)\tfrees=\(stats.freeCount)\tbytes=\(stats.mallocBytesCount)")
case "allocs" where arguments.count == 4:
    let scenario = find(arguments[1])
    guard let low = Int(arguments[2]), let high = Int(arguments[3]), high > low else { print("bad counts"); exit(64) }
    let result = steadyAllocations(scenario, low: low, high: high)
    print("\(scenario.name)\tlow=\(low)\thigh=\(high)\tmallocs=\(result.total)\tper_unit=\(result.perUnit)")
case "check":
    // Budget: 0 heap allocations per input event and per stream tick in steady state. 200 operations
    // after a 100-operation warm-up (on top of each scenario's own): takes well under a second.
    var passed = 0
    var failed = 0
    for scenario in scenarios where scenario.unit == "input event" || scenario.unit == "tick" {
        let result = steadyAllocations(scenario, low: 100, high: 300)
        let ok = result.total == 0
        if ok { passed += 1 } else { failed += 1 }
        let perUnit = String(Int((result.perUnit * 100).rounded())).leftPadded(3)
        print("\(ok ? "ok  " : "FAIL") \(scenario.name): \(result.total) allocations in 200 operations "
            + "(\(perUnit.dropLast(2)).\(perUnit.suffix(2)) per \(scenario.unit); budget 0)")
    }
    print("bench: \(passed) passed, \(failed) failed")
    exit(failed == 0 ? 0 : 1)
default:
    print("usage: bench-counts list | run NAME ITERATIONS | allocs NAME LOW HIGH | check")
    exit(64)
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
