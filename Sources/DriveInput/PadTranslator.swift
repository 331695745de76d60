import DriveInputModel

/// Turns a pad's frames into frames in the kernel's gamepad layout, following its `PadLayout`: the
/// DragonRise's `BTN_BASE4` becomes `BTN_START`, its `ABS_RZ` (right stick, vertical) `ABS_RY`, a hat
/// bit or a half axis a D-pad direction on `ABS_HAT0X`/`ABS_HAT0Y`. Pure and stateful (the state of
/// every element, so only changes are reported); inputs the layout does not name are dropped.
///
/// Values follow SDL's rules: an axis input is taken over its range (`+a2`: the positive half only;
/// `~`: inverted) and spread over the element's range (a stick −1…1, a trigger or `+leftx` 0…1,
/// `-leftx` 0…−1); a whole axis onto a trigger keeps the kernel's range and flat (the flat at rest), so
/// it reads what the same axis reads untranslated; an axis drives a button when past the middle of its
/// input range; a hat drives a button when its value has any bit of the mask; a button drives an axis to the end of its output
/// range, and back to 0 when released.
public struct PadTranslator {
    /// The layout followed.
    public let layout: PadLayout
    private let absInfo: [UInt16: AbsInfo]
    private var routesByKey: [UInt16: [Int]] = [:]
    private var routesByAxis: [UInt16: [Int]] = [:]
    /// Route indices of each digital hat (0…3), by the hat's evdev X code and Y code.
    private var routesByHatAxis: [UInt16: [Int]] = [:]
    private var hatState: [Int: (x: Int32, y: Int32)] = [:]
    private var routeActive: [Bool]
    private var keyDown: [UInt16: Bool] = [:]
    private var axisOut: [UInt16: Double] = [:]
    private var hatOut: [UInt16: Int32] = [:]

    /// A translator for a pad with `absInfo` (its axes' ranges) following `layout`.
    public init(layout: PadLayout, absInfo: [UInt16: AbsInfo]) {
        self.layout = layout
        self.absInfo = absInfo
        routeActive = Array(repeating: false, count: layout.routes.count)
        for (index, route) in layout.routes.enumerated() {
            switch route.input {
            case .key(let code): routesByKey[code, default: []].append(index)
            case .axis(let code, _, _): routesByAxis[code, default: []].append(index)
            case .hat(let hat, _):
                let x = EvdevCode.absHat0X + UInt16(hat * 2)
                routesByHatAxis[x, default: []].append(index)
                routesByHatAxis[x + 1, default: []].append(index)
            }
        }
    }

    /// The frame in the standard layout; nil when nothing the layout names changed.
    public mutating func translate(_ frame: InputFrame) -> InputFrame? {
        var output = InputFrame(time: frame.time, acceleration: frame.acceleration)
        var touched: [Int] = []
        for axis in frame.axes {
            if let routes = routesByHatAxis[axis.code] {
                let hat = Int(axis.code - EvdevCode.absHat0X) / 2
                var state = hatState[hat] ?? (0, 0)
                if (axis.code - EvdevCode.absHat0X) % 2 == 0 { state.x = axis.raw } else { state.y = axis.raw }
                hatState[hat] = state
                // SDL's hat value: up 1, right 2, down 4, left 8 (`SDL_HAT_*`).
                let bits = (state.y < 0 ? 1 : 0) | (state.x > 0 ? 2 : 0) | (state.y > 0 ? 4 : 0) | (state.x < 0 ? 8 : 0)
                for index in routes {
                    guard case .hat(_, let mask) = layout.routes[index].input else { continue }
                    routeActive[index] = bits & mask != 0
                    touched.append(index)
                }
            } else if let routes = routesByAxis[axis.code] {
                let centred = absInfo[axis.code]?.normalise(axis.raw, shape: .centred) ?? axis.value
                for index in routes {
                    guard case .axis(_, let half, let inverted) = layout.routes[index].input else { continue }
                    if half == nil,
                       let position = triggerPosition(of: axis, route: layout.routes[index], inverted: inverted) {
                        setRoute(index, position: position, into: &output)
                        continue
                    }
                    // The position within the input range, 0…1 (SDL's axis_min → axis_max).
                    var (from, to): (Double, Double) = half == .positive ? (0, 1) : half == .negative ? (0, -1) : (-1, 1)
                    if inverted { swap(&from, &to) }
                    let position = min(max((centred - from) / (to - from), 0), 1)
                    setRoute(index, position: position, into: &output)
                }
            }
        }
        for key in frame.keys {
            guard let routes = routesByKey[key.code] else { continue }
            for index in routes {
                routeActive[index] = key.pressed
                touched.append(index)
            }
        }
        for index in touched {
            setRoute(index, position: routeActive[index] ? 1 : 0, into: &output)
        }
        emitHats(into: &output)
        if output.axes.isEmpty && output.keys.isEmpty && output.acceleration == nil { return nil }
        return output
    }

    /// The position of a whole axis that drives a trigger, 0…1: the kernel's range and flat as they are,
    /// the flat at the rest end (the input's start; its end for `~`), so a trigger reads the same value,
    /// and gives the same speed, through the layout as without it. Nil for any other route.
    private func triggerPosition(of axis: AxisValue, route: PadLayout.Route, inverted: Bool) -> Double? {
        guard route.outputHalf == nil, case .axis(_, oneSided: true) = route.element.target,
              let info = absInfo[axis.code]
        else { return nil }
        guard inverted else { return info.normalise(axis.raw, shape: .oneSided) }
        // Mirrored, so the maximum is rest; in 64 bits, as the sum of two 32-bit ends can overflow.
        let mirrored = Int64(info.minimum) + Int64(info.maximum) - Int64(axis.raw)
        let clamped = Int32(clamping: min(max(mirrored, Int64(info.minimum)), Int64(info.maximum)))
        return info.normalise(clamped, shape: .oneSided)
    }

    /// `frame`, as the pad gave it and after `translate(_:)` took it, with each axis's value replaced by the
    /// value of the standard axis it drives: the value the mapping uses, for `carbridge monitor`. An axis
    /// that drives no standard axis (a D-pad, a button) keeps its own value.
    public func showingMappedValues(_ frame: InputFrame) -> InputFrame {
        var shown = frame
        for index in shown.axes.indices {
            guard let routes = routesByAxis[shown.axes[index].code] else { continue }
            for route in routes {
                guard case .axis(let code, _) = layout.routes[route].element.target, let value = axisOut[code] else {
                    continue
                }
                shown.axes[index].value = value
                break
            }
        }
        return shown
    }

    /// Applies route `index` at `position` (0…1 along its input) to its element.
    private mutating func setRoute(_ index: Int, position: Double, into output: inout InputFrame) {
        let route = layout.routes[index]
        let pressed = position >= 0.5
        switch route.element.target {
        case .key(let code):
            routeActive[index] = pressed
            setKey(code, down: anyActive(route.element), into: &output)
        case .hatDirection:
            routeActive[index] = pressed
        case .axis(let code, let oneSided):
            if case .key = route.input, let digital = route.element.digitalTarget {
                routeActive[index] = pressed
                setKey(digital, down: anyActive(route.element), into: &output)
                return
            }
            if case .hat = route.input, let digital = route.element.digitalTarget {
                setKey(digital, down: anyActive(route.element), into: &output)
                return
            }
            let value: Double
            switch route.outputHalf {
            case .positive: value = position
            case .negative: value = -position
            case nil: value = oneSided || !isAxisInput(route) ? position : position * 2 - 1
            }
            if axisOut[code] != value {
                axisOut[code] = value
                let raw = Int32((value * 32767).rounded())
                output.axes.append(AxisValue(code: code, value: value, raw: raw))
            }
        }
    }

    private func isAxisInput(_ route: PadLayout.Route) -> Bool {
        if case .axis = route.input { return true }
        return false
    }

    private func anyActive(_ element: StandardElement) -> Bool {
        layout.routes.indices.contains { layout.routes[$0].element == element && routeActive[$0] }
    }

    private mutating func setKey(_ code: UInt16, down: Bool, into output: inout InputFrame) {
        guard (keyDown[code] ?? false) != down else { return }
        keyDown[code] = down
        output.keys.append(KeyChange(code: code, pressed: down))
    }

    /// The D-pad elements to `ABS_HAT0X`/`ABS_HAT0Y` values, reported when they change.
    private mutating func emitHats(into output: inout InputFrame) {
        func direction(_ negative: StandardElement, _ positive: StandardElement) -> Int32 {
            let minus = anyActive(negative), plus = anyActive(positive)
            return minus == plus ? 0 : minus ? -1 : 1
        }
        for (code, value) in [(EvdevCode.absHat0X, direction(.dpleft, .dpright)), (EvdevCode.absHat0X + 1, direction(.dpup, .dpdown))]
        where (hatOut[code] ?? 0) != value {
            hatOut[code] = value
            output.axes.append(AxisValue(code: code, value: Double(value), raw: value))
        }
    }
}
