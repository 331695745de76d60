import DriveCore
import DriveInputModel
import DriveSystem
import CLinux
import Glibc

/// Reads raw kernel `struct input_event` bytes from any fd (a pipe, a replay, an evdev node) on the event loop
/// through the decoder and the frame assembler. `EvdevDevice` reads its node through one, with the kernel's
/// state as the assembler's `stateSource` after `SYN_DROPPED`.
///
/// A read that returns less than the buffer holds drained the fd, and the turn ends there: an evdev node hands
/// out only whole reports, and the loop's epoll is level-triggered, so the next report wakes it again. The C
/// reader (libevdev) reads once more to see `EAGAIN`; this saves that system call on every report.
public final class RawEvdevReader {
    /// Called with every raw event before it is assembled (for `carbridge monitor`).
    public var onEvent: ((InputEvent) -> Void)?
    /// Called with every completed frame.
    public var onFrame: ((InputFrame) -> Void)?
    /// Called once at end of input (the writer closed) or on a read error; the reader is closed by then.
    public var onGone: ((String) -> Void)?
    /// True until `close()` or the end of input.
    public private(set) var isOpen = true

    private let loop: EventLoop
    private var fd: Int32
    private let ownsFD: Bool
    private var decoder = InputEventDecoder()
    private var assembler: EvdevFrameAssembler
    /// The read buffer, 64 events, allocated once (a read allocates nothing).
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: InputEventDecoder.recordSize * 64, alignment: 8)
    private var goneReported = false

    /// Reads `fd` (made non-blocking) with `absInfo` for normalisation; closes it on `close()` when `ownsFD`.
    public convenience init(
        fd: Int32, loop: EventLoop, absInfo: [UInt16: AbsInfo], axisShapes: [UInt16: AxisShape] = [:],
        isAccelerometer: Bool = false, ownsFD: Bool = true
    ) throws {
        try self.init(
            fd: fd, loop: loop,
            assembler: EvdevFrameAssembler(absInfo: absInfo, axisShapes: axisShapes, isAccelerometer: isAccelerometer),
            ownsFD: ownsFD)
    }

    /// Reads `fd` (made non-blocking) into `assembler`; closes it on `close()` when `ownsFD`.
    public init(fd: Int32, loop: EventLoop, assembler: EvdevFrameAssembler, ownsFD: Bool) throws {
        self.fd = fd
        self.loop = loop
        self.ownsFD = ownsFD
        self.assembler = assembler
        try Syscall.setNonBlocking(fd)
    }

    deinit {
        if isOpen { loop.unwatch(fd) }
        if isOpen && ownsFD { Syscall.close(fd) }
        buffer.deallocate()
    }

    /// Asked for the real state after `SYN_DROPPED` (nil: release all keys, re-emit the last axes).
    public var stateSource: (() -> EvdevStateSnapshot?)? {
        get { assembler.stateSource }
        set { assembler.stateSource = newValue }
    }

    /// The keys down as far as the reader knows.
    public var keysDown: Set<UInt16> { assembler.keysDown }

    /// How many `SYN_DROPPED` events were seen.
    public var droppedCount: Int { assembler.droppedCount }

    /// The last raw value of each axis.
    public var axisValues: [UInt16: Int32] { assembler.axisValues }

    /// The whole known state as one frame (all axes, keys down) at `time`.
    public func stateFrame(at time: Instant) -> InputFrame { assembler.stateFrame(at: time) }

    /// Starts watching the fd on the loop.
    public func start() throws {
        guard isOpen else { return }
        // Unwatched by `close()` and `deinit`: the handler never outlives the reader.
        try loop.watch(fd, for: .readable) { [unowned self] events in self.readAvailable(events) }
    }

    /// Stops reading and closes the fd if owned (no `onGone`).
    public func close() {
        guard isOpen else { return }
        isOpen = false
        loop.unwatch(fd)
        if ownsFD { Syscall.close(fd) }
        fd = -1
    }

    private func readAvailable(_ events: IOEvents) {
        let now = loop.now()
        var readSomething = false
        while isOpen {
            let count: Int?
            do {
                count = try Syscall.read(fd, into: buffer)
            } catch let error as SystemError {
                return gone(error.errno == ENODEV ? "device removed (ENODEV)" : "read failed: \(error)")
            } catch {
                return gone("read failed: \(error)")
            }
            guard let count else {
                // EAGAIN. A node that hung up with nothing to read is gone (a removed evdev node says ENODEV).
                if !readSomething && (events.contains(.hangup) || events.contains(.error)) { gone("the device hung up") }
                return
            }
            if count == 0 { return gone("end of input") }
            readSomething = true
            let (onEvent, onFrame) = (self.onEvent, self.onFrame)
            decoder.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { event in
                onEvent?(event)
                if let frame = assembler.feed(event, at: now) { onFrame?(frame) }
                return isOpen
            }
            // Short: the fd is drained (see the type's comment); a full buffer may have more behind it.
            if !isOpen || count < buffer.count { return }
        }
    }

    private func gone(_ reason: String) {
        guard !goneReported else { return }
        goneReported = true
        close()
        onGone?(reason)
    }
}
