import CLinux
import DriveSystem
import Glibc

/// What the force-feedback outputs (`RumbleMotor`, `WheelCentring`) share of evdev's FF interface: the upload
/// request, the effect bits, the one-write play/stop, and the close off the loop (an erase waits for the driver).
enum ForceFeedbackIO {
    /// `EVIOCSFF`: `_IOW('E', 0x80, struct ff_effect)` (a function-like macro Swift does not import).
    static let uploadRequest = UInt(1) << 30 | UInt(MemoryLayout<ff_effect>.size) << 16 | UInt(0x45) << 8 | 0x80

    /// The `EVIOCGBIT(EV_FF)` bits (FF_MAX 0x7f: 128 bits); all clear when the ioctl fails.
    static func effectBits(_ fd: Int32) -> [UInt8] {
        var bits = [UInt8](repeating: 0, count: 16)
        // EVIOCGBIT(EV_FF, 16) = _IOC(_IOC_READ, 'E', 0x20 + EV_FF, 16).
        let request = UInt(2) << 30 | UInt(bits.count) << 16 | UInt(0x45) << 8 | UInt(0x20 + Int(EV_FF))
        guard bits.withUnsafeMutableBytes({ cb_ioctl_ptr(fd, request, $0.baseAddress) }) >= 0 else {
            return [UInt8](repeating: 0, count: 16)
        }
        return bits
    }

    /// True when `code` (`FF_RUMBLE`, `FF_SPRING`, …) is set in `bits`.
    static func has(_ code: Int32, in bits: [UInt8]) -> Bool {
        let bit = Int(code)
        return bits.indices.contains(bit / 8) && bits[bit / 8] & (1 << UInt8(bit % 8)) != 0
    }

    /// One `EV_FF` event (play or stop an effect, the autocentre's strength): one `write`, never waiting.
    static func write(_ fd: Int32, code: UInt16, value: Int32) -> Bool {
        var event = input_event()
        event.type = UInt16(EV_FF)
        event.code = code
        event.value = value
        let written = withUnsafeBytes(of: &event) { Glibc.write(fd, $0.baseAddress, $0.count) }
        return written == MemoryLayout<input_event>.size
    }

    /// Closes `fd` on a one-shot thread (the kernel erases the uploaded effects, which waits for the driver).
    static func closeInBackground(_ fd: Int32) {
        do {
            try BackgroundThread.start { Syscall.close(fd) }
        } catch {
            Syscall.close(fd)
        }
    }
}
