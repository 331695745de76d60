import CoreMetrics
import Prometheus

/// A swift-metrics factory over a swift-prometheus registry that gives each metric family its `# HELP`
/// text. swift-prometheus's own `PrometheusMetricsFactory` registers every swift-metrics metric with an
/// empty help text (swift-metrics has no place for one), so `/metrics` would show `# TYPE` lines only;
/// this factory makes counters and gauges through the registry's `help:` API instead, with the text
/// looked up by the metric's label. Everything else goes to `PrometheusMetricsFactory` unchanged.
struct DescribedMetricsFactory: CoreMetrics.MetricsFactory {
    /// The registry the metrics are made in.
    let registry: PrometheusCollectorRegistry
    /// Each family's help text, by metric name.
    let help: [String: String]
    private let plain: PrometheusMetricsFactory

    /// A factory making metrics in `registry`, each described by `help[name]`.
    init(registry: PrometheusCollectorRegistry, help: [String: String]) {
        self.registry = registry
        self.help = help
        self.plain = PrometheusMetricsFactory(registry: registry)
    }

    /// The help text for `label` (empty for a metric without one: swift-prometheus then writes no
    /// `# HELP` line, which DashboardMetricsTests catches).
    private func text(_ label: String) -> String { help[label] ?? "" }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CoreMetrics.CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: text(label))
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: text(label))
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any CoreMetrics.RecorderHandler {
        // A swift-metrics Gauge is a non-aggregating recorder; an aggregating one is a histogram.
        guard !aggregate else { return plain.makeRecorder(label: label, dimensions: dimensions, aggregate: true) }
        return registry.makeGauge(name: label, labels: dimensions, help: text(label))
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any CoreMetrics.MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: text(label))
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any CoreMetrics.TimerHandler {
        plain.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CoreMetrics.CounterHandler) { plain.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { plain.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any CoreMetrics.RecorderHandler) { plain.destroyRecorder(handler) }
    func destroyMeter(_ handler: any CoreMetrics.MeterHandler) { plain.destroyMeter(handler) }
    func destroyTimer(_ handler: any CoreMetrics.TimerHandler) { plain.destroyTimer(handler) }
}
