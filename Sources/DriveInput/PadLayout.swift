/// Which evdev codes of one pad give which element of the standard layout: a GameControllerDB mapping
/// with SDL's button, axis and hat indices translated back to the pad's own evdev codes.
///
/// SDL numbers a Linux pad's inputs from its capabilities (`ConfigJoystick` in
/// `src/joystick/linux/SDL_sysjoystick.c`): buttons are its `EV_KEY` codes from `BTN_JOYSTICK` (0x120)
/// up to `KEY_MAX` (exclusive), then those below `BTN_JOYSTICK`; hats are the `ABS_HAT0X`…`ABS_HAT3Y`
/// pairs that look digital (`GuessIfAxesAreDigitalHat`), in order; axes are the `EV_ABS` codes below
/// `ABS_MAX` in order, without the digital hats. `sdlButtons`, `sdlHats` and `sdlAxes` are those lists.
public struct PadLayout: Hashable, Sendable {
    /// How a pad's layout was chosen.
    public enum Origin: Hashable, Sendable {
        /// The kernel's codes as they are (no DB entry, or the user's `[buttons]` table rules).
        case kernel
        /// The user's `[buttons]` table: bindings name the pad's own codes, no translation.
        case buttonsTable
        /// A GameControllerDB entry.
        case database(name: String, source: GameControllerDB.Source, line: Int)
    }

    /// The layout in words, for `carbridge devices` and the log.
    public var summary: String {
        switch origin {
        case .kernel: return "the kernel's codes (no GameControllerDB entry)"
        case .buttonsTable: return "the kernel's codes, bound by the [buttons] table"
        case .database(let name, let source, let line):
            let gaps = missing.isEmpty ? "" : "; the pad lacks \(missing.joined(separator: ", "))"
            return "standard, from \(source) line \(line) (\"\(name)\")\(gaps)"
        }
    }

    /// Where one standard element comes from on this pad.
    public struct Route: Hashable, Sendable {
        /// The standard element.
        public var element: StandardElement
        /// `+leftx`/`-leftx`: the half of the output driven.
        public var outputHalf: GameControllerMapping.AxisHalf?
        /// The pad's input, in evdev terms.
        public var input: Input
    }

    /// A pad input in evdev terms.
    public enum Input: Hashable, Sendable {
        /// An `EV_KEY` code.
        case key(UInt16)
        /// An `EV_ABS` code: the whole range or one half, possibly inverted.
        case axis(UInt16, half: GameControllerMapping.AxisHalf?, inverted: Bool)
        /// A digital hat (`ABS_HAT0X` + 2 × `hat`) and SDL's mask (1 up, 2 right, 4 down, 8 left).
        case hat(Int, mask: Int)
    }

    /// How the layout was chosen.
    public var origin: Origin
    /// Every route of the mapping that the pad has the input for, in the mapping's order.
    public var routes: [Route]
    /// Bindings of the mapping naming an SDL index this pad does not have (e.g. `b12` on an 11-button pad).
    public var missing: [String]

    /// No translation: the pad's own codes.
    public static func untranslated(_ origin: Origin) -> PadLayout { PadLayout(origin: origin, routes: [], missing: []) }

    /// True when frames must be translated.
    public var translates: Bool {
        if case .database = origin { return true }
        return false
    }

    /// Translates `mapping` for a pad with `info`'s capabilities.
    public init(mapping: GameControllerMapping, info: InputDeviceInfo, origin: Origin) {
        self.origin = origin
        routes = []
        missing = []
        let buttons = Self.sdlButtons(keys: info.keys)
        let hats = Self.sdlHats(axes: info.axes)
        let axes = Self.sdlAxes(axes: info.axes, digitalHats: hats)
        for binding in mapping.bindings {
            let input: Input
            switch binding.input {
            case .button(let index):
                guard index < buttons.count else {
                    missing.append("\(binding.element.rawValue):b\(index)")
                    continue
                }
                input = .key(buttons[index])
            case .axis(let index, let half, let inverted):
                guard index < axes.count else {
                    missing.append("\(binding.element.rawValue):a\(index)")
                    continue
                }
                input = .axis(axes[index], half: half, inverted: inverted)
            case .hat(let index, let mask):
                guard index < hats.count else {
                    missing.append("\(binding.element.rawValue):h\(index).\(mask)")
                    continue
                }
                input = .hat(hats[index], mask: mask)
            }
            routes.append(Route(element: binding.element, outputHalf: binding.outputHalf, input: input))
        }
    }

    private init(origin: Origin, routes: [Route], missing: [String]) {
        self.origin = origin
        self.routes = routes
        self.missing = missing
    }

    /// SDL's button numbering: `EV_KEY` codes from `BTN_JOYSTICK` to `KEY_MAX` (exclusive), then below `BTN_JOYSTICK`.
    public static func sdlButtons(keys: Set<UInt16>) -> [UInt16] {
        let sorted = keys.sorted()
        let joystick = EvdevCode.btnJoystick
        return sorted.filter { $0 >= joystick && $0 < EvdevCode.keyMax } + sorted.filter { $0 < joystick }
    }

    /// SDL's hats: the hat numbers (0 for `ABS_HAT0X`/`Y`, … 3) whose axes look digital, in order.
    public static func sdlHats(axes: [UInt16: AbsInfo]) -> [Int] {
        (0..<4).filter { hat in
            let x = axes[EvdevCode.absHat0X + UInt16(hat * 2)]
            let y = axes[EvdevCode.absHat0X + UInt16(hat * 2 + 1)]
            return isDigitalHat(x: x, y: y)
        }
    }

    /// SDL's axis numbering: `EV_ABS` codes below `ABS_MAX` in order, without the axes of digital hats.
    public static func sdlAxes(axes: [UInt16: AbsInfo], digitalHats: [Int]) -> [UInt16] {
        axes.keys.sorted().filter { code in
            guard code < EvdevCode.absMax else { return false }
            if EvdevCode.isHat(code) { return !digitalHats.contains(Int(code - EvdevCode.absHat0X) / 2) }
            return true
        }
    }

    /// SDL's `GuessIfAxesAreDigitalHat` (with its hint `SDL_JOYSTICK_LINUX_DIGITAL_HATS` unset): a hat
    /// whose present axes all range −1…1, or all have no fuzz, flat or resolution.
    public static func isDigitalHat(x: AbsInfo?, y: AbsInfo?) -> Bool {
        if x == nil && y == nil { return false }
        let present = [x, y].compactMap { $0 }
        if present.allSatisfy({ $0.minimum == -1 && $0.maximum == 1 }) { return true }
        return present.allSatisfy { $0.fuzz == 0 && $0.flat == 0 && $0.resolution == 0 }
    }

    /// The standard names of each evdev key code of this pad (for `carbridge monitor`).
    public var keyNames: [UInt16: [String]] {
        var names: [UInt16: [String]] = [:]
        for route in routes {
            if case .key(let code) = route.input { names[code, default: []].append(route.element.displayName) }
        }
        return names
    }

    /// The standard names of each evdev axis code of this pad (hats: both axes of the hat).
    public var axisNames: [UInt16: [String]] {
        var names: [UInt16: [String]] = [:]
        for route in routes {
            switch route.input {
            case .axis(let code, let half, _):
                let sign = half.map { $0 == .positive ? "+" : "-" } ?? ""
                names[code, default: []].append(sign + route.element.displayName)
            case .hat(let hat, let mask):
                let code = EvdevCode.absHat0X + UInt16(hat * 2) + (mask & 0b0101 != 0 ? 1 : 0)
                names[code, default: []].append(route.element.displayName)
            case .key:
                break
            }
        }
        return names
    }
}
