import DriveCore
import DriveInputModel

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
    public var absInfo: [UInt16: AbsInfo] { didSet { rebuildAxisTables() } }
    /// Per-axis shape overrides (default: `AbsInfo.defaultShape(forCode:)`).
    public var axisShapes: [UInt16: AxisShape] { didSet { rebuildAxisTables() } }
    /// True for an accelerometer node (`INPUT_PROP_ACCELEROMETER`): `ABS_X/Y/Z` also become
    /// `InputFrame.acceleration` in m/s² (raw / resolution × g; resolution is units per g).
    public var isAccelerometer: Bool
    /// Asked for the device's real state after `SYN_DROPPED`; nil for raw fds (replays, pipes).
    public var stateSource: (() -> EvdevStateSnapshot?)?

    /// The keys currently down, as far as this assembler knows.
    public private(set) var keysDown: Set<UInt16>
    /// The last-known raw value of each axis.
    public var axisValues: [UInt16: Int32] {
        var values = overflowValues
        var known = knownAxes
        while known != 0 {
            let code = known.trailingZeroBitCount
            values[UInt16(code)] = valueTable[code]
            known &= known - 1
        }
        return values
    }
    /// True between a `SYN_DROPPED` and the `SYN_REPORT` that ends the lost stretch.
    public private(set) var isDiscarding = false
    /// How many `SYN_DROPPED` events were seen.
    public private(set) var droppedCount = 0

    // Per-axis state in fixed tables indexed by code (every `EV_ABS` code the kernel sends is ≤ ABS_MAX,
    // 0x3f), so a report hashes nothing; codes beyond (only from pipes and files) go to the overflow
    // dictionaries. Same behaviour either way.
    /// `absInfo` and the shape of each code < `tableSize`, rebuilt whenever `absInfo`/`axisShapes` change.
    private var infoTable: [AbsInfo?] = []
    private var shapeTable: [AxisShape] = []
    /// The last-known raw value of each code < `tableSize`, valid where its bit in `knownAxes` is set.
    private var valueTable = [Int32](repeating: 0, count: Self.tableSize)
    private var knownAxes: UInt64 = 0
    private var overflowValues: [UInt16: Int32] = [:]
    /// The report in progress: the last value of each axis (bit set in `pendingMask` for codes < `tableSize`,
    /// else in `pendingOverflow`), and the order in which the axes first appeared.
    private var pendingValues = [Int32](repeating: 0, count: Self.tableSize)
    private var pendingMask: UInt64 = 0
    private var pendingOverflow: [UInt16: Int32] = [:]
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
        rebuildAxisTables()
        if knowsInitialAxisValues {
            for (code, info) in absInfo { setKnownValue(info.value, of: code) }
        }
    }

    /// ABS_MAX + 1: the codes kept in the fixed tables.
    private static let tableSize = 64

    private mutating func rebuildAxisTables() {
        infoTable = (0..<Self.tableSize).map { absInfo[UInt16($0)] }
        shapeTable = (0..<Self.tableSize).map {
            Self.shape(ofAxis: UInt16($0), absInfo: absInfo, axisShapes: axisShapes)
        }
    }

    private static func shape(
        ofAxis code: UInt16, absInfo: [UInt16: AbsInfo], axisShapes: [UInt16: AxisShape]
    ) -> AxisShape {
        if let shape = axisShapes[code] { return shape }
        return absInfo[code]?.defaultShape(forCode: code) ?? .centred
    }

    /// The last-known raw value of axis `code`, nil when unknown.
    private func knownValue(of code: UInt16) -> Int32? {
        guard code < Self.tableSize else { return overflowValues[code] }
        return knownAxes & (1 << UInt64(code)) != 0 ? valueTable[Int(code)] : nil
    }

    private mutating func setKnownValue(_ value: Int32, of code: UInt16) {
        guard code < Self.tableSize else {
            overflowValues[code] = value
            return
        }
        valueTable[Int(code)] = value
        knownAxes |= 1 << UInt64(code)
    }

    private mutating func forgetValue(of code: UInt16) {
        guard code < Self.tableSize else {
            overflowValues[code] = nil
            return
        }
        knownAxes &= ~(1 << UInt64(code))
    }

    /// Records `value` as the pending value of axis `code` (first appearance in the report fixes its order).
    private mutating func setPending(_ value: Int32, of code: UInt16) {
        if code < Self.tableSize {
            let bit: UInt64 = 1 << UInt64(code)
            if pendingMask & bit == 0 {
                pendingMask |= bit
                pendingAxisOrder.append(code)
            }
            pendingValues[Int(code)] = value
        } else {
            if pendingOverflow.updateValue(value, forKey: code) == nil { pendingAxisOrder.append(code) }
        }
    }

    /// The shape used for axis `code`.
    public func shape(ofAxis code: UInt16) -> AxisShape {
        if code < Self.tableSize { return shapeTable[Int(code)] }
        return Self.shape(ofAxis: code, absInfo: absInfo, axisShapes: axisShapes)
    }

    /// The absinfo of axis `code`, if any.
    private func info(ofAxis code: UInt16) -> AbsInfo? {
        code < Self.tableSize ? infoTable[Int(code)] : absInfo[code]
    }

    /// The normalised value of `raw` on axis `code` (raw passes through unchanged without absinfo).
    public func normalise(axis code: UInt16, raw: Int32) -> Double {
        guard let info = info(ofAxis: code) else { return Double(raw) }
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
        pendingMask = 0
        if !pendingOverflow.isEmpty { pendingOverflow.removeAll(keepingCapacity: true) }
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
            if reassertAxes || knownValue(of: code) != value {
                setPending(value, of: code)
                if reassertAxes { forgetValue(of: code) }  // force it through flush's change check
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
            let raw: Int32
            if code < Self.tableSize {
                let index = Int(code)
                raw = pendingValues[index]
                if knownAxes & (1 << UInt64(code)) != 0 && valueTable[index] == raw { continue }
                valueTable[index] = raw
                knownAxes |= 1 << UInt64(code)
            } else {
                guard let value = pendingOverflow[code] else { continue }
                if overflowValues[code] == value { continue }
                overflowValues[code] = value
                raw = value
            }
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
            let raw = Double(knownValue(of: code) ?? 0)
            let resolution = Double(info(ofAxis: code)?.resolution ?? 0)
            return raw / (resolution > 0 ? resolution : 1) * EvdevCode.standardGravity
        }
        return Vector3(
            x: metresPerSecondSquared(EvdevCode.absX), y: metresPerSecondSquared(EvdevCode.absY),
            z: metresPerSecondSquared(EvdevCode.absZ))
    }
}
