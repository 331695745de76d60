import DriveBluetooth
import DriveConfig
import DriveCore
import DriveInputModel
import DriveLink
import DriveMapping
import DriveRuntime
import DriveSystem
import DriveView
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
    private let phone: SteeringGuard.PhoneSettings
    private let linkSaver: DashboardLoop.LinkSaver
    private let configFile: String?
    private var core: DashboardLoop?
    private var server: DashboardServer?
    /// The port listened on, once started (useful with port 0).
    package private(set) var port: Int?

    /// A dashboard for `settings` (whose `listen` must be set). A car picked in its Bluetooth search is
    /// saved as `link.url` in `configFile` (the file the run was started with; nil: none, and a pick is
    /// refused with the reason), validated with `resolver` like every config edit.
    package init(
        settings: CarbridgeConfig.Dashboard, maxSpeed: Int, logger: Logger, configFile: String? = nil,
        resolver: (any EventCodeResolver & Sendable)? = nil, phone: SteeringGuard.PhoneSettings? = nil
    ) {
        self.settings = settings
        self.phone = phone ?? SteeringGuard.PhoneSettings(maxSpeed: maxSpeed)
        self.maxSpeed = maxSpeed
        self.logger = logger
        self.configFile = configFile
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
            port: bridge, state: bridge.state, link: bridge.link.state, model: model, loop: loop, metrics: metrics,
            maxSpeed: maxSpeed, phone: phone,
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
        let sessions = SessionStore()
        let joins = settings.showsJoinCode ? JoinCodes(sessionLimit: sessions.limit) : nil
        let port: Int
        let server: DashboardServer
        let certificate: DashboardCertificate?
        do {
            certificate = try settings.tls.isOn ? loadCertificate(for: address) : nil
            server = DashboardServer(
                access: DashboardAccess(controls: settings.controls, token: settings.token), sessions: sessions, hub: hub,
                metrics: metrics, joins: joins, tiltHz: settings.tiltHz, phoneTimeout: phone.inputTimeout, certificate: certificate,
                camera: settings.cameraURL,
                // The run's log is the loop's (its handlers are not the web threads'): the line goes through the mailbox.
                warn: { [logger] line in submitter.submit { logger.warning("\(line)") } })
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
        if settings.token != nil, let configFile, let warning = SecretFileMode.warning(tokenIn: configFile) {
            logger.warning("dashboard: \(warning)")
        }
        if let joins {
            switch JoinAddress.base(settings: settings, port: port) {
            case .success(let base):
                core.startJoins(joins, base: base, perTurn: settings.join == .perTurn, sessions: sessions)
                logger.notice("dashboard: phones join by the QR code (live view and page) at \(base)/join (one code, one phone)")
                if settings.url == nil && address.isLoopback {
                    logger.notice("dashboard: \(base) is this machine only: phones need [dashboard] url (or a listen address they reach)")
                }
            case .failure(let reason):
                logger.warning("dashboard: no join QR code: \(reason)")
            }
        }
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
    /// Saves a link URL in the run's config file and returns the file's path, or the reason it could not
    /// (called on a helper thread: it writes and syncs a file).
    typealias LinkSaver = @Sendable (String) throws(ConfigErrors) -> String

    /// The run, as an input sees it: apply, note, the events.
    private let port: any DrivePort
    private let model: RunViewModel
    private let loop: EventLoop
    private let metrics: DashboardMetrics
    private let maxSpeed: Int
    var hub: DashboardHub?
    /// Where the search's outcomes are logged (nil: nowhere).
    var logger: Logger?
    private var steering: SteeringGuard
    /// The label of each connection with controls (from its `User-Agent`).
    private var labels: [Int: String] = [:]
    /// When each connection was last told it may not drive (refusals to a phone reporting at `tilt_hz` are
    /// not repeated for every report).
    private var lastRefusal: [Int: Instant] = [:]
    /// True while the dashboard's own controls are applied (the steps they make are checked after them all).
    private var applying = false
    private var joins: JoinCodes?
    private var joinBase = ""
    private var joinPerTurn = false
    private var sessions: SessionStore?
    private var joinShown: Int?
    /// Connections whose controls were revoked (their messages still in the mailbox are ignored).
    private var revokedClients: Set<Int> = []
    private let makeScanner: () -> any BluetoothScanning
    private let saveLink: LinkSaver
    private var search = BluetoothSearch()
    /// The URL being saved while its file is written on a helper thread, and that work.
    private var saveInFlight: (url: String, work: Offloaded<Result<String, ConfigErrors>>)?
    private var scanner: (any BluetoothScanning)?
    private var scanTimer: EventLoop.TimerID?
    private lazy var timer = DeadlineTimer(loop: loop) { [weak self] in self?.steeringTick() }
    private var recentFrames: [(frame: Frame, time: Instant)] = []
    private var retryAt: Instant?
    private var sawLinkUp = false
    private var handshakePending = false
    private var stallsSeen = 0
    /// What the link's lifecycle did, as of its last change (a run event).
    private var linkStatistics: LinkSupervisor.Statistics?
    /// The drive state's speed as of the last step.
    private var speed: Int
    /// The model's version last published.
    private var publishedVersion = -1
    /// How many recent frames are shown.
    static let frameHistory = 12

    /// The loop side of a dashboard on `port`, whose drive and link stand at `state` and `link` now.
    init(
        port: any DrivePort, state: DriveState, link: LinkState, model: RunViewModel, loop: EventLoop,
        metrics: DashboardMetrics, maxSpeed: Int, phone: SteeringGuard.PhoneSettings = .init(),
        scanner: @escaping () -> any BluetoothScanning, saveLink: @escaping LinkSaver
    ) {
        self.steering = SteeringGuard(phone: phone)
        self.makeScanner = scanner
        self.saveLink = saveLink
        self.port = port
        self.model = model
        self.loop = loop
        self.metrics = metrics
        self.maxSpeed = maxSpeed
        self.speed = state.speed
        port.events.subscribe(self)
        metrics.link(link)
        metrics.drive(state)
    }

    /// Leaves the run's subscribers. They keep this and this keeps the bridge, so until this is called the
    /// two keep each other (`Dashboard.stop`, or a failed start, calls it).
    func detach() {
        timer.cancel()
        stopScan()
        // A car being saved when the dashboard stops is saved, not lost (the loop may no longer run).
        if let save = saveInFlight?.work, !save.finish(waitingUntil: Instant(nanoseconds: MonotonicClock.nanoseconds()).advanced(by: .seconds(5))) {
            logger?.error("dashboard: saving link.url did not finish within 5 s")
        }
        port.events.unsubscribe(self)
    }

    /// Publishes the current state to the browsers.
    func publish() {
        guard let hub else { return }
        var run = model.snapshot
        if let driver = steering.driver { run.inputs.append("\(driver.label) (\(driver.kind == .phone ? "phone" : "steering"))") }
        hub.publish(DashboardState(
            run: run, recentFrames: recentFrames, retryAt: retryAt, maxSpeed: maxSpeed, bluetooth: search.state,
            driver: steering.driver?.label))
    }

    /// Shows join codes (`[dashboard] join`): `base` is `SCHEME://HOST:PORT`; with `perTurn`, the sessions
    /// made by a join are revoked in `sessions` when a kiosk turn ends.
    func startJoins(_ joins: JoinCodes, base: String, perTurn: Bool, sessions: SessionStore) {
        self.joins = joins
        joinBase = base
        joinPerTurn = perTurn
        self.sessions = sessions
        publishJoin()
    }

    /// Shows the current join code, if it changed: its URL and QR code to the page (through the hub) and to
    /// the live view (a `RunEvent.join` with the terminal lines ready, so DriveTerminal needs no encoder).
    private func publishJoin() {
        guard let joins, let hub else { return }
        let current = joins.current
        guard current.generation != joinShown else { return }
        joinShown = current.generation
        let url = joinBase + "/join?code=" + current.code
        do {
            let code = try QRCode(encoding: url)
            hub.publishJoin(DashboardHub.JoinPage(url: url, svg: code.svg()))
            port.events.publish(.join(JoinInvitation(url: url, lines: code.terminalLines)))
        } catch {
            logger?.warning("dashboard: no join QR code: \(error)")
            hub.publishJoin(nil)
            port.events.publish(.join(nil))
        }
    }

    /// A kiosk turn ended with `join = "per-turn"`: the phones that joined lose their controls (a steering
    /// one is lost input, as if it had disconnected) and a fresh code is shown.
    private func turnEnded() {
        guard joinPerTurn, let joins, let hub else { return }
        let ended = joins.endTurn()
        sessions?.revoke(ended)
        let clients = hub.revoke(sessions: ended)
        if !clients.isEmpty { port.note("turn over: \(clients.count) joined phone(s) lost control; scan the new code") }
        revoked(clients: clients)
        publishJoin()
    }

    /// The connections `clients` lost their controls: each is handled as if it had disconnected.
    func revoked(clients: [Int]) {
        let now = loop.now()
        var controls: [Control] = []
        for client in clients {
            revokedClients.insert(client)
            controls += steering.disconnected(client, at: now)
        }
        apply(controls)
        timer.arm(at: steering.nextDeadline)
        publish()
    }

    /// An event from a browser connection with controls.
    func handle(_ event: DashboardHub.ClientEvent, from client: Int) {
        if case .joinCodeSpent = event { return publishJoin() }
        if case .disconnected = event { revokedClients.remove(client) } else if revokedClients.contains(client) { return }
        let now = loop.now()
        let driverBefore = steering.driver?.client
        let controls: [Control]
        switch event {
        case .connected(let label):
            labels[client] = label
            return
        case .message(let message):
            let outcome = steering.receive(message, from: client, label: labels[client] ?? "browser \(client)", at: now)
            controls = outcome.controls
            if let refusal = outcome.refusal { refuse(client, refusal, at: now) }
            switch message {
            case .bluetoothScan: startScan(at: now)
            case .bluetoothPick(let address): pick(address)
            case .control, .ping, .tilt, .stick, .straight, .release: break
            }
        case .disconnected:
            labels[client] = nil
            lastRefusal[client] = nil
            controls = steering.disconnected(client, at: now)
        case .joinCodeSpent: controls = []
        }
        if controls.contains(.inputLost) { port.note("the browser that was driving is gone: input lost") }
        apply(controls)
        timer.arm(at: steering.nextDeadline)
        if driverBefore != steering.driver?.client { publish() }
    }

    /// Tells `client` why it may not drive (at most once a second, except the first time).
    private func refuse(_ client: Int, _ reason: String, at now: Instant) {
        metrics.rejectedMessages.increment()
        if let last = lastRefusal[client], now.duration(since: last) < .seconds(1) { return }
        lastRefusal[client] = now
        hub?.reply(reason, to: client)
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

    /// Saves the picked car off the loop (the file is written and synced on a helper thread); the outcome
    /// comes back through the mailbox. One save at a time.
    private func pick(_ address: String) {
        defer { publish() }
        if let busy = saveInFlight { return search.notSaved(address, because: "still saving \(busy.url): pick again once it is saved") }
        guard let url = search.pick(address) else { return }
        search.saving(url)
        let saveLink = self.saveLink
        let work = loop.offload({ () -> Result<String, ConfigErrors> in
            do throws(ConfigErrors) { return .success(try saveLink(url)) } catch { return .failure(error) }
        }, then: { [weak self] result in self?.saved(url, result) })
        // A save that could not start a thread ran here and is already complete.
        if !work.isComplete { saveInFlight = (url, work) }
    }

    private func saved(_ url: String, _ result: Result<String, ConfigErrors>) {
        saveInFlight = nil
        switch result {
        case .success(let file):
            search.saved(url, in: file)
            logger?.notice("dashboard: saved link.url = \"\(url)\" in \(file) (takes effect at the next start)")
        case .failure(let error):
            let reason = error.errors.map(\.description).joined(separator: "; ")
            search.notSaved(url, because: reason)
            logger?.warning("dashboard: could not save link.url = \"\(url)\": \(reason)")
        }
        publish()
    }

    private func steeringTick() {
        let controls = steering.tick(at: loop.now())
        if !controls.isEmpty, let loss = steering.lastSilence {
            let limit = "\(Int(steering.phoneTimeout.milliseconds)) ms"
            switch loss.silence {
            case .sensor:
                port.note("\(labels[loss.client] ?? "the phone that was driving"): its tilt sensor went silent for \(limit): input lost")
                hub?.tell(.init(.stopped, "Stopped: this phone's tilt sensor sent nothing for \(limit). Hold the phone in your hands, or switch to Stick."), to: loss.client)
            case .page:
                port.note("the browser that was driving went silent: input lost")
                hub?.tell(.init(.stopped, "Stopped: nothing came from this page for \(limit) (in the background, or a weak connection)."), to: loss.client)
            }
        }
        apply(controls)
        timer.arm(at: steering.nextDeadline)
        publish()
    }

    private func apply(_ controls: [Control]) {
        guard !controls.isEmpty else { return }
        applying = true
        for control in controls {
            metrics.dashboardControls.increment()
            port.apply(control)
        }
        applying = false
        steering.observe(speed: speed)
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
            speed = step.state.speed
            // After the other subscribers have heard of the turn's end (its engine-off step).
            if case .turnLimit? = step.timedStop, joinPerTurn { loop.execute { [weak self] in self?.turnEnded() } }
            // A stop from elsewhere (a pad's loss, the keyboard's engine off, the link): a phone's stick rests first.
            if !applying { steering.observe(speed: step.state.speed) }
        case .linkStatistics(let statistics):
            linkStatistics = statistics
        case .link(let state):
            linkChanged(to: state)
        case .carLine:
            metrics.carLines.increment()
            metrics.carStatus(model.snapshot.carStatus)
        case .carBattery(let change, _):
            metrics.carLowBattery.record(change.isLow ? 1 : 0)
        case .notice, .logLine, .device, .handsFree, .feedback, .join, .padBattery:
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
            if let statistics = linkStatistics {
                if statistics.stalls > stallsSeen { metrics.stalls.increment(by: statistics.stalls - stallsSeen) }
                stallsSeen = statistics.stalls
                if let delay = statistics.lastRetryDelay { retryAt = loop.now().advanced(by: delay) }
            }
        case .connecting, .closed:
            break
        }
    }
}
