import DriveSystem

/// A `RunSessionExtension` (the web dashboard) as one of the run's services.
final class ExtensionService: RunService {
    let name: String
    private let item: any RunSessionExtension
    private let bridge: Bridge
    private let model: RunViewModel
    private let loop: EventLoop

    /// `item` with the run's bridge, view model and loop.
    init(_ item: any RunSessionExtension, bridge: Bridge, model: RunViewModel, loop: EventLoop) {
        self.item = item
        self.name = String(describing: type(of: item))
        self.bridge = bridge
        self.model = model
        self.loop = loop
    }

    func start() throws { try item.start(bridge: bridge, model: model, loop: loop) }

    func stop() { item.stop() }
}
