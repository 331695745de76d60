import DriveCore
import DriveSystem
import Prometheus

/// `carbridge_car_status{key="…"}`: one gauge for each numeric key of the car's status table. The set
/// follows the table (a key it pushed out, or whose value became text, loses its series), so a car
/// sending ever new keys cannot grow `/metrics`. Keys are safe label values by the status grammar
/// (letters, digits, `_`).
final class CarStatusGauges: @unchecked Sendable {
    /// The metric's name.
    static let name = "carbridge_car_status"
    /// Its `# HELP` text.
    static let help = "The car's numeric status values (KEY=VALUE lines, docs/protocol.md §7), by key."

    private let registry: PrometheusCollectorRegistry
    /// Only the event loop changes the set; the lock is for a reader that may come later.
    private let lock = ConditionLock()
    private var gauges: [String: Gauge] = [:]

    /// Gauges made in `registry`.
    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Makes the series match `table`'s numeric entries.
    func follow(_ table: CarStatusTable) {
        lock.withLock {
            var kept: [String: Gauge] = [:]
            for entry in table.entries {
                guard let number = entry.number else { continue }
                let gauge = gauges[entry.key]
                    ?? registry.makeGauge(name: Self.name, labels: [("key", entry.key)], help: Self.help)
                gauge.set(number)
                kept[entry.key] = gauge
            }
            for (key, gauge) in gauges where kept[key] == nil { registry.unregisterGauge(gauge) }
            gauges = kept
        }
    }
}
