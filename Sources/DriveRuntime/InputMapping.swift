import DriveCore
import DriveInputModel
import DriveMapping
import DriveSystem

/// The mapping stage of the inputs: one `ControlMapper` fed with the devices' frames, its timer (long
/// presses, repeats, hands-free arming), and what comes out of it: controls, calibrations, the hands-free
/// rider's reading.
///
/// Hands-free driving works out its controls against the drive state; the mapping follows that state as
/// one of the run's subscribers (`RunEvent.step`), so nothing asks the bridge for it.
final class InputMapping: RunSubscriber {
    /// Every control the frames produce.
    var onControl: ((Control) -> Void)?
    /// The calibrate action fired: the new tilt neutrals (the roll's and a tilt throttle's pitch's).
    var onCalibrate: ((TiltNeutrals) -> Void)?
    /// The hands-free rider's reading after each frame and tick (only when something is hands-free).
    var onHandsFree: ((HandsFreeReading) -> Void)?

    private let loop: EventLoop
    private var mapper: ControlMapper
    /// Follows `mapper.nextDeadline`.
    private let timer: DeadlineTimer
    /// The mapper's output for one frame, reused so that a frame allocates nothing.
    private var scratch: [MappedEvent] = []

    /// A mapping with `settings` on `loop`.
    init(settings: ControlMapper.Settings, loop: EventLoop) {
        self.loop = loop
        mapper = ControlMapper(settings: settings)
        scratch.reserveCapacity(8)
        timer = DeadlineTimer(loop: loop)
        timer.setAction { [unowned self] in self.tick() }  // the mapping's own timer
    }

    /// Maps one frame from a device used as `role`.
    func map(_ frame: InputFrame, role: DeviceRole) {
        var events = takeScratch()
        mapper.handle(frame, role: role, into: &events)
        deliver(&events)
        if role == .accelerometer || role == .board { reportHandsFree() }
    }

    /// The device used as `role` went away: its held buttons are released (and their controls delivered).
    func deviceLost(role: DeviceRole) {
        var events = mapper.deviceLost(role: role)
        deliver(&events)
    }

    /// Stops the timer.
    func stop() {
        timer.cancel()
    }

    func receive(_ event: RunEvent) {
        if case .step(let step) = event { mapper.observe(step.state) }
    }

    private func tick() {
        var events = takeScratch()
        mapper.tick(at: loop.now(), into: &events)
        deliver(&events)
        reportHandsFree()
    }

    private func reportHandsFree() {
        if let onHandsFree, let reading = mapper.handsFreeReading { onHandsFree(reading) }
    }

    /// The reusable event array, empty (taken out of `scratch`, so a control delivered from it that leads
    /// back here finds none and makes its own).
    private func takeScratch() -> [MappedEvent] {
        var events: [MappedEvent] = []
        swap(&events, &scratch)
        return events
    }

    /// Delivers `events`, then keeps the emptied array as the scratch for the next frame.
    private func deliver(_ events: inout [MappedEvent]) {
        let onControl = self.onControl
        for event in events {
            switch event {
            case .control(let control): onControl?(control)
            case .calibrate:
                if let neutrals = mapper.tiltNeutrals { onCalibrate?(neutrals) }
            }
        }
        events.removeAll(keepingCapacity: true)
        if events.capacity > scratch.capacity { swap(&events, &scratch) }
        timer.arm(at: mapper.nextDeadline)
    }
}
