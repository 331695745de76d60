/// Starts `RunService`s in order and stops them in reverse (swift-service-lifecycle's `ServiceGroup`
/// on one event loop): a service that fails to start stops the ones started before it, and `stop()`
/// stops each started service exactly once.
public final class ServiceGroup {
    /// The services in start order.
    public let services: [any RunService]
    /// How many of `services` (from the front) are started and not stopped yet.
    private var startedCount = 0
    private var shutdownAnnounced = false

    /// A group of `services`, started in this order.
    public init(_ services: [any RunService]) {
        self.services = services
    }

    /// Starts every service not started yet, in order. If one throws, the ones started before it are
    /// stopped in reverse order and its error is rethrown as it is (the user reads the service's own
    /// message).
    public func start() throws {
        while startedCount < services.count {
            do {
                try services[startedCount].start()
            } catch {
                stop()
                throw error
            }
            startedCount += 1
        }
    }

    /// Tells the started services, newest first, that the run is ending (once).
    public func shutdownBegan() {
        guard !shutdownAnnounced else { return }
        shutdownAnnounced = true
        for service in services[0..<startedCount].reversed() { service.shutdownBegan() }
    }

    /// Stops the started services, newest first (idempotent).
    public func stop() {
        while startedCount > 0 {
            startedCount -= 1
            services[startedCount].stop()
        }
    }
}
