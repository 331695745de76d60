import DriveConfig
import DriveCore
import DriveLink
import DriveMapping
import DriveRuntime
import DriveSystem
import Logging

/// The web dashboard of `carbridge run` (`[dashboard] listen`, `--dashboard`): started by the run session
/// only when enabled, so a run without it starts no thread and opens no socket.
///
/// Threads: carbridge's event loop stays the only owner of the drive state. The web server runs on its
/// own threads (`DashboardServer`). State goes out as values through the `DashboardHub` (published on
/// every change of the run's view model; each browser gets at most 20 a second, and at once on a change
/// of engine, link or speed); controls come in through the loop's mailbox (`EventLoop.submit`) and are
/// applied on the loop by `DashboardLoop`, through the bridge, like any input device's.
package final class Dashboard: RunSessionExtension {
    /// The settings.
    package let settings: CarbridgeConfig.Dashboard
    /// The metrics `/metrics` renders.
    package let metrics = DashboardMetrics()
    private let logger: Logger
    private let maxSpeed: Int
    private let linkSaver: DashboardLoop.LinkSaver
    private var core: DashboardLoop?
    private var server: DashboardServer?
    /// The port listened on, once started (useful with port 0).
    package private(set) var port: Int?

    /// A dashboard for `settings` (whose `listen` must be set). A car picked in its Bluetooth search is
    /// saved as `link.url` in `configFile` (the file the run was started with; nil: none, and a pick is
    /// refused with the reason), validated with `resolver` like every config edit.
    package init(
        settings: CarbridgeConfig.Dashboard, maxSpeed: Int, logger: Logger, configFile: String? = nil,
        resolver: (any EventCodeResolver)? = nil
    ) {
        self.settings = settings
        self.maxSpeed = maxSpeed
        self.logger = logger
        linkSaver = { (url: String) throws(ConfigErrors) -> String in
            guard let resolver else {
                throw ConfigErrors([ConfigError(file: configFile ?? "(no config file)", line: nil, key: "link.url",
                                                message: "this dashboard cannot edit the config file")])
            }
            return try ConfigFileEditor.saveLinkURL(url, file: configFile, resolver: resolver)
        }
    }

    package func start(bridge: Bridge, model: RunViewModel, loop: EventLoop) throws {
        guard let address = settings.listen else { return }
        let core = DashboardLoop(
            bridge: bridge, model: model, loop: loop, metrics: metrics, maxSpeed: maxSpeed,
            scanner: { [loop] in BlueZScanner(loop: loop) }, saveLink: linkSaver)
        core.logger = logger
        self.core = core
        let bound = LoopBound(core)
        let submitter = loop.submitter
        let hub = DashboardHub { client, event in
            submitter.submit { bound.value.handle(event, from: client) }
        }
        core.hub = hub
        core.publish()
        let port: Int
        let server: DashboardServer
        let certificate: DashboardCertificate?
        do {
            certificate = try settings.tls.isOn ? loadCertificate(for: address) : nil
            server = DashboardServer(
                access: DashboardAccess(controls: settings.controls, token: settings.token), hub: hub, metrics: metrics,
                certificate: certificate, camera: settings.cameraURL)
            port = try server.start(address: address)
        } catch {
            // The run's subscribers keep the loop side, which keeps the bridge: leave them.
            core.detach()
            self.core = nil
            throw error
        }
        self.server = server
        self.port = port
        let shown = ListenAddress(host: address.host, port: port)
        let mode = settings.controls ? (settings.token != nil ? "controls with the token" : "controls") : "view only"
        let scheme = settings.tls.scheme
        let identity = certificate.map { "; certificate SHA-256 \($0.fingerprint)" } ?? ""
        logger.notice("dashboard on \(scheme)://\(shown)/ (\(mode)); metrics on \(scheme)://\(shown)/metrics\(identity)")
        if let warning = settings.cameraWarning { logger.warning("dashboard: \(warning)") }
    }

    /// The HTTPS identity: the operator's files, or the stored self-signed certificate (made, and the reason
    /// logged, when there is none to reuse).
    private func loadCertificate(for address: ListenAddress) throws -> DashboardCertificate {
        let certificate = try DashboardCertificate.load(
            settings.tls, directory: { try StateFile.directory(environment: StateFile.processEnvironment) },
            hosts: DashboardCertificate.subjectNames(for: address))
        if let reason = certificate.regenerated {
            logger.notice("dashboard: made a new self-signed certificate (\(reason))")
        }
        return certificate
    }

    package func stop() {
        server?.stop()
        server = nil
        core?.detach()
        core = nil
    }
}

/// The dashboard's part on the event loop: one of the run's subscribers, told every event after the view
/// model. It keeps what only the dashboard shows (the last frames, the retry instant), updates the metrics,
/// publishes a state to the browsers whenever the model or its own part changed, and applies the
/// browsers' controls through `SteeringGuard`, and runs the Bluetooth search (`BluetoothSearch`: a
/// `BluetoothScanning` on the loop, bounded by a loop timer; a pick saved through `saveLink`). Loop
/// thread only.
final class DashboardLoop: RunSubscriber {
    /// Saves a link URL in the run's config file and returns the file's path, or the reason it could not.
    typealias LinkSaver = (String) throws(ConfigErrors) -> String

    private let bridge: Bridge
    private let model: RunViewModel
    private let loop: EventLoop
    private let metrics: DashboardMetrics
    private let maxSpeed: Int
    var hub: DashboardHub?
    /// Where the search's outcomes are logged (nil: nowhere).
    var logger: Logger?
    private var steering = SteeringGuard()
    private let makeScanner: () -> any BluetoothScanning
    private let saveLink: LinkSaver
    private var search = BluetoothSearch()
    private var scanner: (any BluetoothScanning)?
    private var scanTimer: EventLoop.TimerID?
    private lazy var timer = DeadlineTimer(loop: loop) { [weak self] in self?.steeringTick() }
    private var recentFrames: [(frame: Frame, time: Instant)] = []
    private var retryAt: Instant?
    private var sawLinkUp = false
    private var handshakePending = false
    private var stallsSeen = 0
    /// The model's version last published.
    private var publishedVersion = -1
    /// How many recent frames are shown.
    static let frameHistory = 12

    init(
        bridge: Bridge, model: RunViewModel, loop: EventLoop, metrics: DashboardMetrics, maxSpeed: Int,
        scanner: @escaping () -> any BluetoothScanning, saveLink: @escaping LinkSaver
    ) {
        self.makeScanner = scanner
        self.saveLink = saveLink
        self.bridge = bridge
        self.model = model
        self.loop = loop
        self.metrics = metrics
        self.maxSpeed = maxSpeed
        bridge.events.subscribe(self)
        metrics.link(bridge.link.state)
        metrics.drive(bridge.state)
    }

    /// Leaves the run's subscribers. They keep this and this keeps the bridge, so until this is called the
    /// two keep each other (`Dashboard.stop`, or a failed start, calls it).
    func detach() {
        timer.cancel()
        stopScan()
        bridge.events.unsubscribe(self)
    }

    /// Publishes the current state to the browsers.
    func publish() {
        guard let hub else { return }
        var run = model.snapshot
        if steering.hasSteeringClient { run.inputs.append("browser (steering)") }
        hub.publish(DashboardState(
            run: run, recentFrames: recentFrames, retryAt: retryAt, maxSpeed: maxSpeed, bluetooth: search.state))
    }

    /// An event from a browser connection with controls.
    func handle(_ event: DashboardHub.ClientEvent, from client: Int) {
        let now = loop.now()
        let wasSteering = steering.hasSteeringClient
        let controls: [Control]
        switch event {
        case .message(let message):
            controls = steering.received(message, from: client, at: now)
            switch message {
            case .bluetoothScan: startScan(at: now)
            case .bluetoothPick(let address): pick(address)
            case .control, .ping: break
            }
        case .disconnected: controls = steering.disconnected(client, at: now)
        }
        apply(controls)
        timer.arm(at: steering.nextDeadline)
        if wasSteering != steering.hasSteeringClient { publish() }
    }

    // MARK: Bluetooth search

    /// The search's state as the page shows it.
    var bluetoothSearch: BluetoothSearchState { search.state }

    private func startScan(at now: Instant) {
        guard search.begin(at: now) else { return publish() }
        let scanner = makeScanner()
        self.scanner = scanner
        if let deadline = search.deadline {
            scanTimer = loop.schedule(at: deadline) { [weak self] in self?.scanTimeUp() }
        }
        publish()
        scanner.start { [weak self, weak scanner] event in
            guard let self, let scanner, self.scanner === scanner else { return }
            self.search.received(event)
            if case .failed(let sentence) = event {
                self.logger?.notice("dashboard: Bluetooth search: \(sentence)")
                self.stopScan()
            }
            self.publish()
        }
    }

    private func scanTimeUp() {
        scanTimer = nil
        stopScan()
        search.finish()
        publish()
    }

    private func stopScan() {
        if let scanTimer { loop.cancel(scanTimer) }
        scanTimer = nil
        let running = scanner
        scanner = nil
        running?.stop()
    }

    private func pick(_ address: String) {
        defer { publish() }
        guard let url = search.pick(address) else { return }
        do {
            let file = try saveLink(url)
            search.saved(url, in: file)
            logger?.notice("dashboard: saved link.url = \"\(url)\" in \(file) (takes effect at the next start)")
        } catch {
            let reason = error.errors.map(\.description).joined(separator: "; ")
            search.notSaved(url, because: reason)
            logger?.warning("dashboard: could not save link.url = \"\(url)\": \(reason)")
        }
    }

    private func steeringTick() {
        let controls = steering.tick(at: loop.now())
        if !controls.isEmpty { bridge.note("a browser tab that was steering went silent: input lost") }
        apply(controls)
        timer.arm(at: steering.nextDeadline)
        publish()
    }

    private func apply(_ controls: [Control]) {
        for control in controls {
            metrics.dashboardControls.increment()
            bridge.apply(control)
        }
    }

    // MARK: RunSubscriber

    func receive(_ event: RunEvent) {
        switch event {
        case .step(let step):
            for frame in step.frames {
                metrics.sent(frame)
                if handshakePending {
                    handshakePending = false
                    metrics.handshakes.increment()
                }
                recentFrames.append((frame, step.time))
            }
            if recentFrames.count > Self.frameHistory { recentFrames.removeFirst(recentFrames.count - Self.frameHistory) }
            if step.control == .inputLost { metrics.inputLostStops.increment() }
            metrics.drive(step.state)
        case .link(let state):
            linkChanged(to: state)
        case .carLine:
            metrics.carLines.increment()
        case .notice, .logLine, .device, .handsFree, .feedback:
            break
        }
        // Only a change the browsers can see is published (the model's, or the frames kept here).
        let version = model.version
        guard version != publishedVersion else { return }
        publishedVersion = version
        publish()
    }

    private func linkChanged(to state: LinkState) {
        metrics.link(state)
        retryAt = nil
        switch state {
        case .up:
            if sawLinkUp { metrics.reconnects.increment() }
            sawLinkUp = true
            handshakePending = true
        case .down:
            if let stream = bridge.link as? any ReconnectingLink {
                if stream.stalls > stallsSeen { metrics.stalls.increment(by: stream.stalls - stallsSeen) }
                stallsSeen = stream.stalls
                if let delay = stream.lastRetryDelay { retryAt = loop.now().advanced(by: delay) }
            }
        case .connecting, .closed:
            break
        }
    }
}

/// A link that reconnects with back-off and counts its stalls (every `StreamLink`: TCP, serial, RFCOMM).
protocol ReconnectingLink: AnyObject {
    var stalls: Int { get }
    var lastRetryDelay: Duration? { get }
}

extension StreamLink: ReconnectingLink {}
