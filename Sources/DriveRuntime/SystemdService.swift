import Logging

/// systemd's notifications for a `Type=notify` run: `READY=1` from the loop's first turn, the
/// watchdog's pings from the loop, `STATUS=` following the view model, `STOPPING=1` as the run
/// begins to end (see `SystemdNotifier`).
final class SystemdService: RunService {
    let name = "systemd"
    private let notifier: SystemdNotifier
    private let model: RunViewModel
    private let logger: Logger

    /// Notifications through `notifier`, the status from `model`.
    init(notifier: SystemdNotifier, model: RunViewModel, logger: Logger) {
        self.notifier = notifier
        self.model = model
        self.logger = logger
    }

    func start() throws {
        notifier.report(model)
        notifier.start()  // READY=1 from the loop's first turn, then WATCHDOG=1 from the loop
        if let interval = notifier.watchdogInterval { logger.info("systemd watchdog: a ping every \(interval)") }
    }

    func shutdownBegan() { notifier.stopping() }

    func stop() {}
}
