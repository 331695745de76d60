import CLinux
import DriveCore
import DriveLink
import DriveSystem
import Glibc

// Helpers shared by the test targets (a regular target only tests depend on).

/// A test connector's `open()`: a connected non-blocking AF_UNIX stream pair; the far end (the car's)
/// replaces `peer`, whose old fd is closed, and the link's end is returned. `buffer` shrinks both ends'
/// kernel buffers (the link's send, the car's receive), for tests that fill them.
package func openSocketPair(replacing peer: inout Int32, buffer: Int32? = nil) throws -> Int32 {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, SocketSupport.streamSocketType, 0, &fds) == 0 else { throw LinkFailure("socketpair failed") }
    if var size = buffer {
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, 4)
        setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &size, 4)
    }
    if peer >= 0 { Glibc.close(peer) }
    peer = fds[1]
    return fds[0]
}

/// A loop on a manual clock (like swift-nio's `EmbeddedEventLoop`): its time moves only when the
/// test advances it (`advance(by:)`, `run(until:)`, `spin`, `run(_:for:)`), timers fire at their exact
/// instants, real fds (pipes, socketpairs) are still polled, and no wall time passes.
package func makeManualLoop() throws -> EventLoop {
    try EventLoop(clock: .manual)
}

/// Runs `loop` for `duration` of its time: on a manual loop, advances its clock through every timer
/// on the way (instant in wall time); on the real loop, waits that long.
package func run(_ loop: EventLoop, for duration: Duration) throws {
    try loop.run(until: loop.now().advanced(by: duration))
}

/// Runs `loop` until `condition` holds or `timeout` passes (in the loop's time); returns whether it held.
/// On a manual loop each turn that finds nothing to do advances the clock (by at most 50 ms, never
/// past the next timer), so a timeout there costs no wall time.
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


/// Everything `fd` gives until a read returns 0 (the end: a pipe whose write end is closed) or fails
/// (nothing more for now: `EAGAIN` on a non-blocking fd), as UTF-8 text.
package func readText(until fd: Int32) -> String {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = Glibc.read(fd, &buffer, buffer.count)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
