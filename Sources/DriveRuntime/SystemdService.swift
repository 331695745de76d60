import Logging

/// systemd's notifications for a `Type=notify` run: `READY=1` from the loop's first turn, the
/// watchdog's pings from the loop, `STATUS=` following the view model, `STOPPING=1` as the run
/// begins to end (see `SystemdNotifier`). One of the run's subscribers: the status follows the view model,
/// which is told every event before it.
final class SystemdService: RunService, RunSubscriber {
    let name = "systemd"
    private let notifier: SystemdNotifier
    private let model: RunViewModel
    private let logger: Logger
    private var reportedVersion = -1

    /// Notifications through `notifier`, the status from `model`.
    init(notifier: SystemdNotifier, model: RunViewModel, logger: Logger) {
        self.notifier = notifier
        self.model = model
        self.logger = logger
    }

    func receive(_ event: RunEvent) {
        guard model.version != reportedVersion else { return }
        reportedVersion = model.version
        notifier.report(model.snapshot)
    }

    func start() throws {
        notifier.report(model.snapshot)
        notifier.start()  // READY=1 from the loop's first turn, then WATCHDOG=1 from the loop
        if let interval = notifier.watchdogInterval { logger.info("systemd watchdog: a ping every \(interval)") }
    }

    func shutdownBegan() { notifier.stopping() }

    func stop() {}
}
