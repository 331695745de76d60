import DriveSystem
import CLinux
import Glibc

/// A link over a serial tty (`/dev/rfcomm0`, a USB adapter, a pty).
public typealias SerialLink = StreamLink<SerialConnector>

/// Opens a tty non-blocking in raw mode at a baud rate, 8N1, CLOCAL|CREAD.
public struct SerialConnector: StreamConnector {
    /// The device path.
    public var path: String
    /// The baud rate (one of `LinkURL.supportedBaudRates`).
    public var baud: Int

    /// Creates a connector for `path` at `baud`.
    public init(path: String, baud: Int = LinkURL.defaultBaud) {
        self.path = path
        self.baud = baud
    }

    /// `serial://PATH?baud=N`.
    public var name: String { LinkURL.serial(path: path, baud: baud).description }

    /// The termios speed constant for a baud rate, nil when unsupported.
    public static func speed(forBaud baud: Int) -> speed_t? {
        switch baud {
        case 9600: return speed_t(B9600)
        case 19200: return speed_t(B19200)
        case 38400: return speed_t(B38400)
        case 57600: return speed_t(B57600)
        case 115200: return speed_t(B115200)
        default: return nil
        }
    }

    /// Opens the tty (O_RDWR|O_NOCTTY|O_NONBLOCK) and sets raw 8N1 at the baud rate.
    public func open() throws -> (fd: Int32, progress: ConnectProgress) {
        guard let speed = Self.speed(forBaud: baud) else {
            throw LinkFailure("baud \(baud) is not supported: use one of 9600, 19200, 38400, 57600, 115200")
        }
        let fd = cb_open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0)
        if fd < 0 { throw LinkFailure(openAdvice(Glibc.errno), errno: Glibc.errno) }
        var settings = termios()
        if tcgetattr(fd, &settings) != 0 {
            let code = Glibc.errno
            Syscall.close(fd)
            throw LinkFailure(openAdvice(code), errno: code)
        }
        cfmakeraw(&settings)
        settings.c_cflag &= ~(tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CSIZE) | tcflag_t(CRTSCTS))
        settings.c_cflag |= tcflag_t(CS8) | tcflag_t(CLOCAL) | tcflag_t(CREAD)
        _ = cfsetispeed(&settings, speed)
        _ = cfsetospeed(&settings, speed)
        if tcsetattr(fd, TCSANOW, &settings) != 0 {
            let code = Glibc.errno
            Syscall.close(fd)
            throw LinkFailure("cannot configure \(path) (\(SocketSupport.reason(code))): is it a serial device?", errno: code)
        }
        return (fd, .connected)
    }

    /// Never called: a tty is connected as soon as it is open.
    public func finishConnect(_ fd: Int32) throws {}

    /// One sentence for a failed open.
    public func openAdvice(_ code: Int32) -> String {
        switch code {
        case ENOENT:
            return "\(path) does not exist: bind the paired car with `sudo rfcomm bind 0 AA:BB:CC:DD:EE:FF` or plug in the adapter"
        case EACCES, EPERM:
            return "no permission to open \(path): add yourself to the dialout group (`sudo usermod -aG dialout $USER`, then log in again)"
        case EBUSY:
            return "\(path) is busy: another program has it open"
        case ENOTTY:
            return "\(path) is not a serial device (not a tty)"
        case EIO, ENXIO, ENODEV:
            return "\(path) is not connected (\(SocketSupport.reason(code))): is the car on and in range, or the adapter plugged in?"
        default:
            return "cannot open \(path) (\(SocketSupport.reason(code)))"
        }
    }

    /// One sentence for a lost tty.
    public func lossSentence(_ error: SystemError) -> String {
        switch error.errno {
        case EIO, ENXIO, ENODEV:
            return "\(path) stopped working (\(SocketSupport.reason(error.errno))): was it unplugged, or did the Bluetooth link drop?"
        default:
            return "\(path) failed (\(SocketSupport.reason(error.errno)))"
        }
    }

    /// Drops unsent output so `close` never waits for the line to drain.
    public func prepareClose(_ fd: Int32) { _ = tcflush(fd, TCOFLUSH) }

    /// Discards the tty's output queue, so `close` does not wait out `closing_wait` (up to 30 s)
    /// and nothing queued reaches the car later.
    public func prepareAbort(_ fd: Int32) { _ = tcflush(fd, TCOFLUSH) }
}
