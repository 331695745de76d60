import DriveInputModel

/// One open input device as the coordinator sees it: it delivers normalised `InputFrame`s on the loop
/// from `start()` until `stop()`, and reports its loss once through `onGone`.
///
/// `EvdevDevice` (a gamepad, keyboard, …) and `AccelerometerSource` (an evdev or IIO accelerometer with
/// its mount matrix applied) are the two kinds.
public protocol InputSource: AnyObject {
    /// The device in words, e.g. `"Xbox Wireless Controller" (/dev/input/event7)`.
    var description: String { get }
    /// Called with every frame.
    var onFrame: ((InputFrame) -> Void)? { get set }
    /// Called once when the device goes away or a read fails (not after `stop()`).
    var onGone: ((String) -> Void)? { get set }
    /// Starts delivering frames on the loop.
    func start() throws
    /// Stops delivering frames and lets the device go (no `onGone`).
    func stop()
}

extension EvdevDevice: InputSource {
    public var description: String { "\"\(info.name)\" (\(path))" }

    /// `close()`.
    public func stop() { close() }
}

extension RawEvdevReader: InputSource {
    public var description: String { "raw evdev reader" }

    /// `close()`.
    public func stop() { close() }
}

extension EvemuPlayer: InputSource {
    /// `replay "NAME"`.
    public var description: String { "replay \"\(recording.info.name)\"" }

    /// A recording is never lost: its end is `onFinished`.
    public var onGone: ((String) -> Void)? {
        get { nil }
        set {}
    }

    /// Starts playing now.
    public func start() { start(at: nil) }
}
