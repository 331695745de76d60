import DriveCore
import DriveMapping

/// A device's full state as a resync source reports it after `SYN_DROPPED`: keys down and axis values.
public struct EvdevStateSnapshot: Hashable, Sendable {
    /// The `EV_KEY` codes currently down.
    public var keysDown: Set<UInt16>
    /// Current raw value of each `EV_ABS` code.
    public var axisValues: [UInt16: Int32]

    /// Creates a snapshot.
    public init(keysDown: Set<UInt16> = [], axisValues: [UInt16: Int32] = [:]) {
        self.keysDown = keysDown
        self.axisValues = axisValues
    }
}

/// Collects evdev events until `SYN_REPORT` and emits one normalised `InputFrame` per report.
///
/// Coalescing: the last value of each axis in a report wins; key changes keep their order; autorepeat
/// (`EV_KEY` value 2) and presses/releases that do not change the key's state are dropped.
/// `SYN_DROPPED`: everything up to and including the next `SYN_REPORT` is discarded, then the state is
/// resynchronised from `stateSource` (or, without one, every key down is released and the last-known
/// axis values are emitted again). Pure: no I/O, times are handed in.
public struct EvdevFrameAssembler {
    /// The absinfo of each axis, for normalisation.
    public var absInfo: [UInt16: AbsInfo]
    /// Per-axis shape overrides (default: `AbsInfo.defaultShape(forCode:)`).
    public var axisShapes: [UInt16: AxisShape]
    /// True for an accelerometer node (`INPUT_PROP_ACCELEROMETER`): `ABS_X/Y/Z` also become
    /// `InputFrame.acceleration` in m/s² (raw / resolution × g; resolution is units per g).
    public var isAccelerometer: Bool
    /// Asked for the device's real state after `SYN_DROPPED`; nil for raw fds (replays, pipes).
    public var stateSource: (() -> EvdevStateSnapshot?)?

    /// The keys currently down, as far as this assembler knows.
    public private(set) var keysDown: Set<UInt16>
    /// The last-known raw value of each axis.
    public private(set) var axisValues: [UInt16: Int32] = [:]
    /// True between a `SYN_DROPPED` and the `SYN_REPORT` that ends the lost stretch.
    public private(set) var isDiscarding = false
    /// How many `SYN_DROPPED` events were seen.
    public private(set) var droppedCount = 0

    /// The report in progress: the last value of each axis, and the order in which the axes first appeared.
    private var pendingValues: [UInt16: Int32] = [:]
    private var pendingAxisOrder: [UInt16] = []
    private var pendingKeys: [KeyChange] = []
    private var pendingKeyState: [UInt16: Bool] = [:]
    /// The frame `flush` fills and returns, reused (its arrays keep their capacity once the caller has
    /// let go of the previous frame), so a report allocates nothing in steady state.
    private var output = InputFrame(time: .zero)

    /// Creates an assembler for a device with `absInfo` (whose `value`s are the initial axis state)
    /// and `keysDown` initially pressed.
    public init(
        absInfo: [UInt16: AbsInfo], axisShapes: [UInt16: AxisShape] = [:], isAccelerometer: Bool = false,
        keysDown: Set<UInt16> = [], knowsInitialAxisValues: Bool = false
    ) {
        self.absInfo = absInfo
        self.axisShapes = axisShapes
        self.isAccelerometer = isAccelerometer
        self.keysDown = keysDown
        if knowsInitialAxisValues {
            for (code, info) in absInfo { axisValues[code] = info.value }
        }
    }

    /// Records `value` as the pending value of axis `code` (first appearance in the report fixes its order).
    private mutating func setPending(_ value: Int32, of code: UInt16) {
        if pendingValues.updateValue(value, forKey: code) == nil { pendingAxisOrder.append(code) }
    }

    /// The shape used for axis `code`.
    public func shape(ofAxis code: UInt16) -> AxisShape {
        if let shape = axisShapes[code] { return shape }
        return absInfo[code]?.defaultShape(forCode: code) ?? .centred
    }

    /// The normalised value of `raw` on axis `code` (raw passes through unchanged without absinfo).
    public func normalise(axis code: UInt16, raw: Int32) -> Double {
        guard let info = absInfo[code] else { return Double(raw) }
        return info.normalise(raw, shape: shape(ofAxis: code))
    }

    /// Feeds several events; returns the frames they complete.
    public mutating func feed(_ events: [InputEvent], at time: Instant) -> [InputFrame] {
        var frames: [InputFrame] = []
        for event in events {
            if let frame = feed(event, at: time) { frames.append(frame) }
        }
        return frames
    }

    /// Feeds one event; returns a frame when it was a `SYN_REPORT` that completed a non-empty one.
    public mutating func feed(_ event: InputEvent, at time: Instant) -> InputFrame? {
        step(event, at: time) ? output : nil
    }

    /// Takes one event; true when it completed a non-empty frame, which is then in `output`.
    private mutating func step(_ event: InputEvent, at time: Instant) -> Bool {
        if event.isSynDropped {
            droppedCount += 1
            discardPending()
            isDiscarding = true
            return false
        }
        if isDiscarding {
            if event.isSynReport {
                isDiscarding = false
                return resyncInPlace(to: stateSource?() ?? fallbackSnapshot(), at: time)
            }
            return false
        }
        switch event.type {
        case EvdevCode.evSyn:
            if event.isSynReport { return flush(at: time) }
        case EvdevCode.evKey:
            if event.value == 2 { return false }
            let pressed = event.value != 0
            let current = pendingKeyState[event.code] ?? keysDown.contains(event.code)
            if current == pressed { return false }
            pendingKeyState[event.code] = pressed
            pendingKeys.append(KeyChange(code: event.code, pressed: pressed))
        case EvdevCode.evAbs:
            setPending(event.value, of: event.code)
        default:
            break
        }
        return false
    }

    /// Drops the events of the report in progress (at `SYN_DROPPED`, a resync and the end of every report).
    private mutating func discardPending() {
        // Emptied only when not empty: emptying a dictionary that never had storage would allocate some.
        if !pendingValues.isEmpty { pendingValues.removeAll(keepingCapacity: true) }
        pendingAxisOrder.removeAll(keepingCapacity: true)
        pendingKeys.removeAll(keepingCapacity: true)
        if !pendingKeyState.isEmpty { pendingKeyState.removeAll(keepingCapacity: true) }
    }

    /// Ends a discard without a state source's help: what a raw fd knows (no keys down, the last axes).
    private func fallbackSnapshot() -> EvdevStateSnapshot {
        EvdevStateSnapshot(keysDown: [], axisValues: axisValues)
    }

    /// Brings the known state to `snapshot` and returns a frame with the differences: releases and presses
    /// (releases first, in code order), and every axis whose value changed (all known axes when the snapshot
    /// is the raw-fd fallback, so consumers re-assert them). Nil when nothing is to be reported.
    public mutating func resync(to snapshot: EvdevStateSnapshot, at time: Instant) -> InputFrame? {
        resyncInPlace(to: snapshot, at: time) ? output : nil
    }

    /// `resync` with the frame left in `output`; true when there is one.
    private mutating func resyncInPlace(to snapshot: EvdevStateSnapshot, at time: Instant) -> Bool {
        discardPending()
        isDiscarding = false
        let reassertAxes = stateSource == nil
        for code in keysDown.subtracting(snapshot.keysDown).sorted() {
            pendingKeyState[code] = false
            pendingKeys.append(KeyChange(code: code, pressed: false))
        }
        for code in snapshot.keysDown.subtracting(keysDown).sorted() {
            pendingKeyState[code] = true
            pendingKeys.append(KeyChange(code: code, pressed: true))
        }
        for code in snapshot.axisValues.keys.sorted() {
            guard let value = snapshot.axisValues[code] else { continue }
            if reassertAxes || axisValues[code] != value {
                setPending(value, of: code)
                if reassertAxes { axisValues[code] = nil }  // force it through flush's change check
            }
        }
        return flush(at: time)
    }

    /// Ends the report: `output` gets its changes; true when there are any (or it is an accelerometer's).
    private mutating func flush(at time: Instant) -> Bool {
        output.time = time
        output.axes.removeAll(keepingCapacity: true)
        output.keys.removeAll(keepingCapacity: true)
        output.acceleration = nil
        for code in pendingAxisOrder {
            guard let raw = pendingValues[code], axisValues.updateValue(raw, forKey: code) != raw else { continue }
            output.axes.append(AxisValue(code: code, value: normalise(axis: code, raw: raw), raw: raw))
        }
        for change in pendingKeys {
            if change.pressed { keysDown.insert(change.code) } else { keysDown.remove(change.code) }
        }
        if !pendingKeys.isEmpty { output.keys.append(contentsOf: pendingKeys) }
        // Every report of an accelerometer is a sample, even one whose values did not change (a sensor
        // lying still sends only MSC_TIMESTAMP): it proves the sensor is alive to the input-loss watchdog.
        if isAccelerometer { output.acceleration = currentAcceleration() }
        discardPending()
        return !(output.axes.isEmpty && output.keys.isEmpty && !isAccelerometer)
    }

    /// A frame with the whole known state: every known axis (in code order) and a press for every key down,
    /// plus the acceleration for accelerometers. For priming a mapper when a device is opened.
    public func stateFrame(at time: Instant) -> InputFrame {
        var frame = InputFrame(time: time)
        let values = axisValues
        for code in values.keys.sorted() {
            guard let raw = values[code] else { continue }
            frame.axes.append(AxisValue(code: code, value: normalise(axis: code, raw: raw), raw: raw))
        }
        frame.keys = keysDown.sorted().map { KeyChange(code: $0, pressed: true) }
        if isAccelerometer { frame.acceleration = currentAcceleration() }
        return frame
    }

    /// The acceleration in m/s² from the last-known `ABS_X/Y/Z` (raw / resolution × g; resolution 0 counts as 1).
    public func currentAcceleration() -> Vector3 {
        func metresPerSecondSquared(_ code: UInt16) -> Double {
            let raw = Double(axisValues[code] ?? 0)
            let resolution = Double(absInfo[code]?.resolution ?? 0)
            return raw / (resolution > 0 ? resolution : 1) * EvdevCode.standardGravity
        }
        return Vector3(
            x: metresPerSecondSquared(EvdevCode.absX), y: metresPerSecondSquared(EvdevCode.absY),
            z: metresPerSecondSquared(EvdevCode.absZ))
    }
}
