/// Delivers a set of signals to the run from its start on (the set replaces the one watched before,
/// so a later `SignalService` in the group widens it).
final class SignalService: RunService {
    let name = "signals"
    private let source: any SignalSource
    private let signals: [Int32]
    private let handler: (Int32) -> Void

    /// `signals` from `source` to `handler`.
    init(_ signals: [Int32], from source: any SignalSource, to handler: @escaping (Int32) -> Void) {
        self.source = source
        self.signals = signals
        self.handler = handler
    }

    func start() throws { try source.watch(signals, handler) }

    /// The signals stay blocked and watched until the process exits: a late SIGTERM must not kill
    /// it in the middle of restoring the terminal.
    func stop() {}
}
