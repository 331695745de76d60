import CLinux
import DriveSystem
import Glibc

/// A pad's rumble motors (`FF_RUMBLE` through evdev): its node opened a second time for writing, a few
/// effects uploaded once (`EVIOCSFF`), each played later with one non-blocking `write` of an `EV_FF`
/// event: a full queue or a pad gone only loses that pulse.
///
/// Uploading and closing wait for the pad's driver: `EVIOCSFF` (and the erase a close does) sleeps in the
/// kernel until the driver answers, and a uinput pad's user-space side (Steam Input, a remapper, a test)
/// may take up to the kernel's 30 s per effect (drivers/input/misc/uinput.c, `uinput_request_submit`).
/// So an event loop uses `open(…loop:completion:)` and `closeInBackground()`, which do both on a
/// one-shot thread, and only `play` on its own thread.
public final class RumbleMotor {
    /// One pulse pattern: magnitudes 0…1 of the strong (low-frequency) and weak motors, how long each
    /// pulse lasts, the pause before each, and how many pulses.
    public struct Pattern: Hashable, Sendable {
        public var strong: Double
        public var weak: Double
        public var length: Duration
        public var delay: Duration
        public var count: Int32

        /// Creates a pattern.
        public init(strong: Double, weak: Double, length: Duration, delay: Duration = .zero, count: Int32 = 1) {
            self.strong = strong
            self.weak = weak
            self.length = length
            self.delay = delay
            self.count = count
        }
    }

    /// The node.
    public let path: String
    private var fd: Int32
    /// The kernel's id of each uploaded pattern, by the caller's index.
    private var effectIDs: [Int16] = []
    private var counts: [Int32] = []

    /// Opens `path` for writing and uploads `patterns` at `strength` (0…1); nil when the pad has no
    /// `FF_RUMBLE`, may not be written, or refuses the upload (such pads are skipped silently).
    /// Blocks until the pad's driver has taken every effect: not on an event loop's thread.
    public init?(path: String, patterns: [Pattern], strength: Double) {
        self.path = path
        fd = cb_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        // Once every property is set, a failed init still runs deinit: `close()` leaves fd at -1.
        guard ForceFeedbackIO.has(Int32(FF_RUMBLE), in: ForceFeedbackIO.effectBits(fd)) else {
            close()
            return nil
        }
        let scale = min(max(strength, 0), 1) * 65535
        for pattern in patterns {
            var effect = ff_effect()
            effect.type = UInt16(FF_RUMBLE)
            effect.id = -1
            effect.replay.length = UInt16(clamping: pattern.length.milliseconds)
            effect.replay.delay = UInt16(clamping: pattern.delay.milliseconds)
            effect.u.rumble.strong_magnitude = UInt16(min(max(pattern.strong, 0), 1) * scale)
            effect.u.rumble.weak_magnitude = UInt16(min(max(pattern.weak, 0), 1) * scale)
            guard cb_ioctl_ptr(fd, ForceFeedbackIO.uploadRequest, &effect) >= 0 else {
                close()
                return nil
            }
            effectIDs.append(effect.id)
            counts.append(pattern.count)
        }
    }

    deinit { close() }

    /// Opens and uploads (`init`) on a one-shot thread, then calls `completion` on `loop`'s thread with the
    /// motor, or nil (no `FF_RUMBLE`, not writable, refused, or no thread). Call on `loop`'s thread. The
    /// loop keeps reading the pad and sending frames while the driver takes its time; a pad unplugged
    /// meanwhile ends the wait (the kernel fails the pending upload) and gives nil.
    public static func open(
        path: String, patterns: [Pattern], strength: Double, loop: EventLoop,
        completion: @escaping (RumbleMotor?) -> Void
    ) {
        loop.assertOnLoopThread()
        let deliver = LoopBound(completion)
        let submitter = loop.submitter
        do {
            try BackgroundThread.start {
                let handoff = Handoff(RumbleMotor(path: path, patterns: patterns, strength: strength))
                submitter.submit { deliver.value(handoff.motor) }
            }
        } catch {
            completion(nil)
        }
    }

    /// Carries the motor from the uploading thread to the loop's; nothing touches it in between (the
    /// submitter's lock orders the two threads).
    private final class Handoff: @unchecked Sendable {
        let motor: RumbleMotor?
        init(_ motor: RumbleMotor?) { self.motor = motor }
    }

    /// Plays pattern `index` (as passed to `init`): one `write`, never waiting.
    @discardableResult
    public func play(_ index: Int) -> Bool {
        guard fd >= 0, effectIDs.indices.contains(index) else { return false }
        return ForceFeedbackIO.write(fd, code: UInt16(bitPattern: effectIDs[index]), value: counts[index])
    }

    /// Closes the node (the kernel drops the uploaded effects with it). Waits for the pad's driver to
    /// erase them: not on an event loop's thread (`closeInBackground`).
    public func close() {
        guard fd >= 0 else { return }
        Syscall.close(fd)
        fd = -1
    }

    /// Closes the node on a one-shot thread (the erase waits for the pad's driver like an upload); the
    /// motor plays nothing from now on.
    public func closeInBackground() {
        guard fd >= 0 else { return }
        let node = fd
        fd = -1
        ForceFeedbackIO.closeInBackground(node)
    }
}

extension Duration {
    /// Whole milliseconds.
    fileprivate var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
