// Deterministic counts for the carbridge benchmarks (see README, "Performance", and scripts/bench.sh):
//   bench-counts list                      the scenarios: name, unit, units per operation
//   bench-counts run NAME ITERATIONS       set up, warm up, then ITERATIONS operations; prints the heap
//                                          allocations of those operations (malloc-interposer counts)
// Instructions come from running `run` under `valgrind --tool=callgrind` with two iteration counts:
// the difference divided by the difference in iterations is the cost of one operation, without setup.
import BenchScenarios
import MallocInterposerSwift
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "list":
    for scenario in scenarios { print("\(scenario.name)\t\(scenario.unit)\t\(scenario.unitsPerOperation)") }
case "run" where arguments.count == 3:
    guard let scenario = scenarios.first(where: { $0.name == arguments[1] }), let iterations = Int(arguments[2]) else {
        print("unknown scenario or bad count; `bench-counts list` names them")
        exit(64)
    }
    let operation = scenario.makeRunner()
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    for _ in 0..<iterations { operation() }
    MallocInterposerSwift.unhook()
    let stats = MallocInterposerSwift.getStatistics()
    print("\(scenario.name)\titerations=\(iterations)\tmallocs=\(stats.mallocCount)\tfrees=\(stats.freeCount)\tbytes=\(stats.mallocBytesCount)")
default:
    print("usage: bench-counts list | bench-counts run NAME ITERATIONS")
    exit(64)
}
