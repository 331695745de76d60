import DriveCore
import DriveLink
import DriveSystem

// Helpers shared by the test targets (a regular target only tests depend on).

/// Runs `loop` until `condition` holds or `timeout` passes; returns whether it held.
@discardableResult
package func spin(_ loop: EventLoop, timeout: Duration = .seconds(5), until condition: () -> Bool) throws -> Bool {
    let deadline = loop.now().advanced(by: timeout)
    while !condition() {
        let remaining = deadline.duration(since: loop.now())
        if remaining <= .zero { return false }
        try loop.runOnce(timeout: min(remaining, .milliseconds(50)))
    }
    return true
}

/// Records a link's states and lines.
package final class LinkRecorder {
    package var states: [LinkState] = []
    package var lines: [String] = []

    package init(_ link: any CarLink) {
        link.onStateChange = { [weak self] in self?.states.append($0) }
        link.onLine = { [weak self] in self?.lines.append($0.text) }
    }

    package var downReasons: [String] {
        states.compactMap { if case .down(let reason) = $0 { return reason } else { return nil } }
    }
}

