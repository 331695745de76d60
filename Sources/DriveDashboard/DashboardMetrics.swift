import CoreMetrics
import DriveCore
import DriveLink
import Prometheus

/// The run's metrics, through swift-metrics into a swift-prometheus registry (its own, not the
/// process-wide `MetricsSystem`, so nothing else's metrics mix in and tests can make several).
/// `/metrics` renders the registry in the Prometheus text format.
///
/// Every metric is made once here; the event loop only increments and sets them (atomics, no lock,
/// no allocation), and the web side only reads them when rendering.
package final class DashboardMetrics: Sendable {
    /// The registry `/metrics` renders.
    package let registry: PrometheusCollectorRegistry
    private let framesByKind: [Character: CoreMetrics.Counter]
    private let linkStates: [String: CoreMetrics.Gauge]
    let linkUp: CoreMetrics.Gauge
    let reconnects: CoreMetrics.Counter
    let stalls: CoreMetrics.Counter
    let handshakes: CoreMetrics.Counter
    let inputLostStops: CoreMetrics.Counter
    let carLines: CoreMetrics.Counter
    let speed: CoreMetrics.Gauge
    let engineOn: CoreMetrics.Gauge
    let clients: CoreMetrics.Gauge
    let rejectedMessages: CoreMetrics.Counter
    let dashboardControls: CoreMetrics.Counter
    let refusedUpgrades: CoreMetrics.Counter
    let carLowBattery: CoreMetrics.Gauge
    private let carStatusGauges: CarStatusGauges
    let joins: CoreMetrics.Counter
    let joinsRefused: CoreMetrics.Counter
    let throttledAttempts: CoreMetrics.Counter
    let refusedConnections: [String: CoreMetrics.Counter]

    /// The reasons `carbridge_dashboard_closed_connections_total` has a series for.
    package static let closedConnectionReasons = ["address_limit", "address_rate", "head_timeout", "head_too_long", "message_flood"]

    /// The link states `carbridge_link_state` has a series for.
    package static let linkStateNames = ["up", "connecting", "down", "closed"]

    /// What each family means: `/metrics` writes it as the family's `# HELP` line.
    package static let help: [String: String] = [
        "carbridge_frames_sent_total": "Frames handed to the link, by frame type (the frame's first letter).",
        "carbridge_link_state": "1 for the link's current state (up, connecting, down, closed), 0 for the others.",
        "carbridge_link_up": "1 while the link to the car is up, else 0.",
        "carbridge_link_reconnects_total": "Times the link came up again after it had been up before (reconnections).",
        "carbridge_link_stalls_total": "Links closed because the kernel's output queue stopped draining (stall_timeout_ms).",
        "carbridge_handshakes_total": "Connections whose first frame (the safety handshake that stops the car) was delivered.",
        "carbridge_input_lost_stops_total": "Stops because the controlling input went away (unplugged pad, silent browser).",
        "carbridge_car_lines_received_total": "Lines received from the car.",
        "carbridge_speed": "The speed being sent to the car (0-240).",
        "carbridge_engine_on": "1 while the engine is on, else 0.",
        "carbridge_dashboard_clients": "Dashboard WebSocket connections open now.",
        "carbridge_dashboard_rejected_messages_total": "Dashboard messages and logins refused (malformed, view-only, over the rate, wrong token).",
        "carbridge_dashboard_controls_total": "Controls the dashboard applied to the drive state machine.",
        "carbridge_dashboard_refused_upgrades_total": "WebSocket upgrades refused because of a foreign Origin.",
        "carbridge_car_low_battery": "1 while the car's battery is below [car] low_battery, else 0.",
        "carbridge_dashboard_joins_total": "Phones logged in with a join code (the QR code).",
        "carbridge_dashboard_join_refused_total": "Join requests refused (a spent, old or wrong code, or joining off).",
        "carbridge_dashboard_throttled_attempts_total": "Login and join attempts refused unchecked: too many from one address (429).",
        "carbridge_dashboard_closed_connections_total":
            "Connections closed by the dashboard's limits: over the per-address limit, a request head too slow or too long.",
    ]

    /// Makes every metric in a new registry.
    package init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        let factory = DescribedMetricsFactory(registry: registry, help: Self.help)
        var frames: [Character: CoreMetrics.Counter] = [:]
        for kind in Frame.Kind.allCases {
            frames[kind.rawValue] = CoreMetrics.Counter(
                label: "carbridge_frames_sent_total", dimensions: [("type", String(kind.rawValue))], factory: factory)
        }
        framesByKind = frames
        var states: [String: CoreMetrics.Gauge] = [:]
        for name in Self.linkStateNames {
            states[name] = CoreMetrics.Gauge(label: "carbridge_link_state", dimensions: [("state", name)], factory: factory)
        }
        linkStates = states
        linkUp = CoreMetrics.Gauge(label: "carbridge_link_up", factory: factory)
        reconnects = CoreMetrics.Counter(label: "carbridge_link_reconnects_total", factory: factory)
        stalls = CoreMetrics.Counter(label: "carbridge_link_stalls_total", factory: factory)
        handshakes = CoreMetrics.Counter(label: "carbridge_handshakes_total", factory: factory)
        inputLostStops = CoreMetrics.Counter(label: "carbridge_input_lost_stops_total", factory: factory)
        carLines = CoreMetrics.Counter(label: "carbridge_car_lines_received_total", factory: factory)
        speed = CoreMetrics.Gauge(label: "carbridge_speed", factory: factory)
        engineOn = CoreMetrics.Gauge(label: "carbridge_engine_on", factory: factory)
        clients = CoreMetrics.Gauge(label: "carbridge_dashboard_clients", factory: factory)
        rejectedMessages = CoreMetrics.Counter(label: "carbridge_dashboard_rejected_messages_total", factory: factory)
        dashboardControls = CoreMetrics.Counter(label: "carbridge_dashboard_controls_total", factory: factory)
        refusedUpgrades = CoreMetrics.Counter(label: "carbridge_dashboard_refused_upgrades_total", factory: factory)
        carLowBattery = CoreMetrics.Gauge(label: "carbridge_car_low_battery", factory: factory)
        carStatusGauges = CarStatusGauges(registry: registry)
        joins = CoreMetrics.Counter(label: "carbridge_dashboard_joins_total", factory: factory)
        joinsRefused = CoreMetrics.Counter(label: "carbridge_dashboard_join_refused_total", factory: factory)
        throttledAttempts = CoreMetrics.Counter(label: "carbridge_dashboard_throttled_attempts_total", factory: factory)
        var closed: [String: CoreMetrics.Counter] = [:]
        for reason in Self.closedConnectionReasons {
            closed[reason] = CoreMetrics.Counter(
                label: "carbridge_dashboard_closed_connections_total", dimensions: [("reason", reason)], factory: factory)
        }
        refusedConnections = closed
        for (name, gauge) in linkStates { gauge.record(name == "down" ? 1 : 0) }
        linkUp.record(0)
        speed.record(0)
        engineOn.record(0)
        clients.record(0)
        carLowBattery.record(0)
    }

    /// The car's status table now (its numeric values as `carbridge_car_status{key="…"}`).
    func carStatus(_ table: CarStatusTable) { carStatusGauges.follow(table) }

    /// A frame was handed to the link.
    func sent(_ frame: Frame) { framesByKind[frame.kind.rawValue]?.increment() }

    /// The link is now `state`.
    func link(_ state: LinkState) {
        let word: String
        switch state {
        case .up: word = "up"
        case .connecting: word = "connecting"
        case .down: word = "down"
        case .closed: word = "closed"
        }
        for (name, gauge) in linkStates { gauge.record(name == word ? 1 : 0) }
        linkUp.record(word == "up" ? 1 : 0)
    }

    /// The drive state now.
    func drive(_ state: DriveState) {
        speed.record(state.speed)
        engineOn.record(state.engineOn ? 1 : 0)
    }

    /// The Prometheus text format of everything.
    package func render() -> String { registry.emitToString() }
}
