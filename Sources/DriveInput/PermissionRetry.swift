import DriveCore
import DriveSystem

/// Retries an open that fails with `permissionDenied` (a fresh hotplugged node's ACL arrives up to about a
/// second after the node) on loop timers on an absolute grid, without sleeping; any other outcome ends it.
public final class PermissionRetry<Value> {
    private let loop: EventLoop
    private let attempt: () throws -> Value
    private let completion: (Result<Value, Error>) -> Void
    private let deadline: Instant
    private let interval: Duration
    private var start: Instant
    private var attempts = 0
    private var timer: EventLoop.TimerID?
    private var finished = false

    /// Makes the first attempt at once (so `completion` may run before this returns), then retries every
    /// `interval` until `window` has passed since the first attempt.
    public init(
        loop: EventLoop, window: Duration = .seconds(2), interval: Duration = .milliseconds(100),
        attempt: @escaping () throws -> Value, completion: @escaping (Result<Value, Error>) -> Void
    ) {
        self.loop = loop
        self.attempt = attempt
        self.completion = completion
        self.interval = interval
        self.start = loop.now()
        self.deadline = start.advanced(by: window)
        tryOnce()
    }

    /// How many attempts were made so far.
    public var attemptCount: Int { attempts }

    /// True once `completion` ran or `cancel()` was called.
    public var isFinished: Bool { finished }

    /// Stops retrying; `completion` will not run.
    public func cancel() {
        finished = true
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    private func tryOnce() {
        guard !finished else { return }
        attempts += 1
        do {
            let value = try attempt()
            finish(.success(value))
        } catch let error as InputDeviceError {
            guard case .permissionDenied = error else { return finish(.failure(error)) }
            let next = start.advanced(by: interval * attempts)
            if next > deadline { return finish(.failure(error)) }
            timer = loop.schedule(at: next) { [weak self] in
                self?.timer = nil
                self?.tryOnce()
            }
        } catch {
            finish(.failure(error))
        }
    }

    private func finish(_ result: Result<Value, Error>) {
        guard !finished else { return }
        finished = true
        completion(result)
    }
}
