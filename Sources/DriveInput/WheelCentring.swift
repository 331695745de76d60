import CLinux
import DriveSystem
import Glibc

/// A racing wheel's centring force, on while the engine is on: an `FF_SPRING` effect uploaded once
/// (`EVIOCSFF`) and started or stopped with one `EV_FF` write, or, on a wheel without it (the kernel's
/// hid-lg4ff gives a G29 only `FF_CONSTANT` and `FF_AUTOCENTER`), the wheel's own autocentring set with one
/// `EV_FF`/`FF_AUTOCENTER` write. Its node is opened a second time for writing, as `RumbleMotor` does.
///
/// The upload waits for the wheel's driver (a uinput wheel's user-space side may answer late or never), so
/// an event loop uses `open(…loop:completion:)` and `closeInBackground()`, and only `set(on:)` on its thread.
public final class WheelCentring {
    /// How the wheel centres.
    public enum Kind: String, Hashable, Sendable {
        /// An uploaded spring effect, played and stopped.
        case spring
        /// The driver's autocentring, set to a strength or 0.
        case autocenter
    }

    /// The node.
    public let path: String
    /// How this wheel centres.
    public let kind: Kind
    private var fd: Int32
    private var springID: Int16 = -1
    private let autocenterValue: Int32

    /// Opens `path` for writing and, on a wheel with `FF_SPRING`, uploads a spring of `strength` (0…1);
    /// nil when the wheel has neither `FF_SPRING` nor `FF_AUTOCENTER`, may not be written, or refuses the
    /// upload. Blocks until the wheel's driver has taken the effect: not on an event loop's thread.
    public init?(path: String, strength: Double) {
        self.path = path
        let scale = strength.isFinite ? min(max(strength, 0), 1) : 0
        autocenterValue = Int32(scale * 65535)
        fd = cb_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        let bits = ForceFeedbackIO.effectBits(fd)
        if ForceFeedbackIO.has(FF_SPRING, in: bits) {
            kind = .spring
            var effect = ff_effect()
            effect.type = UInt16(FF_SPRING)
            effect.id = -1
            // Length 0 plays until stopped; a centre of 0 is the middle of the wheel's range.
            effect.replay.length = 0
            let saturation = UInt16(scale * 65535)
            let coefficient = Int16(scale * 32767)
            effect.u.condition.0.right_saturation = saturation
            effect.u.condition.0.left_saturation = saturation
            effect.u.condition.0.right_coeff = coefficient
            effect.u.condition.0.left_coeff = coefficient
            effect.u.condition.0.deadband = 0
            effect.u.condition.0.center = 0
            effect.u.condition.1 = effect.u.condition.0
            guard cb_ioctl_ptr(fd, ForceFeedbackIO.uploadRequest, &effect) >= 0 else {
                close()
                return nil
            }
            springID = effect.id
        } else if ForceFeedbackIO.has(FF_AUTOCENTER, in: bits) {
            kind = .autocenter
        } else {
            kind = .autocenter
            close()
            return nil
        }
    }

    deinit { close() }

    /// Opens (`init`) on a one-shot thread, then calls `completion` on `loop`'s thread with the centring, or
    /// nil. Call on `loop`'s thread; the loop keeps reading the wheel meanwhile.
    public static func open(
        path: String, strength: Double, loop: EventLoop, completion: @escaping (WheelCentring?) -> Void
    ) {
        loop.assertOnLoopThread()
        let deliver = LoopBound(completion)
        let submitter = loop.submitter
        do {
            try BackgroundThread.start {
                let handoff = Handoff(WheelCentring(path: path, strength: strength))
                submitter.submit { deliver.value(handoff.centring) }
            }
        } catch {
            completion(nil)
        }
    }

    /// Carries the centring from the opening thread to the loop's; nothing touches it in between.
    private final class Handoff: @unchecked Sendable {
        let centring: WheelCentring?
        init(_ centring: WheelCentring?) { self.centring = centring }
    }

    /// Turns the centring on or off: one `write`, never waiting (a full queue or a wheel gone loses it).
    @discardableResult
    public func set(on: Bool) -> Bool {
        guard fd >= 0 else { return false }
        switch kind {
        case .spring: return ForceFeedbackIO.write(fd, code: UInt16(bitPattern: springID), value: on ? 1 : 0)
        case .autocenter: return ForceFeedbackIO.write(fd, code: UInt16(FF_AUTOCENTER), value: on ? autocenterValue : 0)
        }
    }

    /// Closes the node (the kernel drops the spring with it). Waits for the wheel's driver to erase it: not on
    /// an event loop's thread (`closeInBackground`).
    public func close() {
        guard fd >= 0 else { return }
        Syscall.close(fd)
        fd = -1
    }

    /// Closes the node on a one-shot thread; nothing is written from now on.
    public func closeInBackground() {
        guard fd >= 0 else { return }
        let node = fd
        fd = -1
        ForceFeedbackIO.closeInBackground(node)
    }
}
