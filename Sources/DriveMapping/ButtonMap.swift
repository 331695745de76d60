import DriveInputModel
/// Which action each button triggers, on a short press and (optionally) on a long press.
///
/// Button names are evdev names resolved with an `EventCodeResolver`: any `EV_KEY` name (`BTN_SOUTH`,
/// `KEY_SPACE` …; case-insensitive), or an axis direction such as `ABS_HAT0X-`, `ABS_HAT0X+`,
/// `ABS_HAT0Y-`, `ABS_HAT0Y+` (pressed when the axis is at ≤ −0.5 or ≥ 0.5).
public struct ButtonMap: Hashable, Sendable {
    /// A config entry: button name, action name and the config line (for error messages).
    public typealias Binding = (name: String, action: String, line: Int?)

    /// The action on press (or, for buttons that also have a long-press action, on a short press).
    public var shortPress: [ButtonInput: ButtonAction]
    /// The action when held at least the long-press duration.
    public var longPress: [ButtonInput: ButtonAction]

    /// Creates a map from resolved inputs.
    public init(shortPress: [ButtonInput: ButtonAction] = [:], longPress: [ButtonInput: ButtonAction] = [:]) {
        self.shortPress = shortPress
        self.longPress = longPress
    }

    /// The `EV_KEY` event type.
    static let keyEventType: UInt16 = 1
    /// The `EV_ABS` event type.
    static let absoluteEventType: UInt16 = 3

    /// Every axis code that has a bound direction (so the mapper can watch it).
    public var boundAxisCodes: Set<UInt16> {
        var codes = Set<UInt16>()
        for input in Array(shortPress.keys) + Array(longPress.keys) {
            if case .axisDirection(let code, _) = input { codes.insert(code) }
        }
        return codes
    }

    /// Resolves and validates config bindings; the first problem is thrown as a `ButtonMapError`
    /// naming the entry (and suggesting the closest known name or action).
    public static func parse(
        bindings: [Binding], longPress: [Binding] = [], resolver: any EventCodeResolver
    ) throws(ButtonMapError) -> ButtonMap {
        let result = resolveAll(bindings: bindings, longPress: longPress, resolver: resolver)
        if let first = result.errors.first { throw first }
        return result.map
    }

    /// Resolves and validates config bindings, going on after a problem: the map of every binding that is
    /// fine, and every problem in binding order (short presses, then long presses).
    public static func resolveAll(
        bindings: [Binding], longPress: [Binding] = [], resolver: any EventCodeResolver
    ) -> (map: ButtonMap, errors: [ButtonMapError]) {
        var map = ButtonMap()
        var errors: [ButtonMapError] = []
        var firstLines: [ButtonInput: Int?] = [:]
        for binding in bindings {
            do throws(ButtonMapError) {
                let (input, action) = try resolve(binding, resolver: resolver)
                if let firstLine = firstLines[input] {
                    throw ButtonMapError(.duplicate(name: binding.name, firstLine: firstLine), line: binding.line)
                }
                firstLines[input] = binding.line
                map.shortPress[input] = action
            } catch {
                errors.append(error)
            }
        }
        firstLines = [:]
        for binding in longPress {
            do throws(ButtonMapError) {
                let (input, action) = try resolve(binding, resolver: resolver)
                if let firstLine = firstLines[input] {
                    throw ButtonMapError(.duplicate(name: binding.name, firstLine: firstLine), line: binding.line)
                }
                firstLines[input] = binding.line
                if action == .deadman || map.shortPress[input] == .deadman {
                    throw ButtonMapError(.deadmanWithLongPress(name: binding.name), line: binding.line)
                }
                map.longPress[input] = action
            } catch {
                errors.append(error)
            }
        }
        return (map, errors)
    }

    /// Resolves one binding's button and action.
    private static func resolve(
        _ binding: Binding, resolver: any EventCodeResolver
    ) throws(ButtonMapError) -> (ButtonInput, ButtonAction) {
        let input = try resolveInput(binding.name, line: binding.line, resolver: resolver)
        let actionName = binding.action.lowercased()
        guard let action = ButtonAction(rawValue: actionName) else {
            let suggestion = EditDistance.closest(to: actionName, among: ButtonAction.allCases.map(\.rawValue))
            throw ButtonMapError(
                .unknownAction(action: binding.action, button: binding.name, suggestion: suggestion), line: binding.line)
        }
        return (input, action)
    }

    /// Resolves a button name (`BTN_SOUTH`, `ABS_HAT0X-` …) to an input.
    public static func resolveInput(
        _ rawName: String, line: Int? = nil, resolver: any EventCodeResolver
    ) throws(ButtonMapError) -> ButtonInput {
        let name = rawName.uppercased()
        if let last = name.last, last == "+" || last == "-" {
            let axisName = String(name.dropLast())
            if let code = resolver.code(named: axisName), code.type == absoluteEventType {
                return .axisDirection(code: code.code, positive: last == "+")
            }
        } else if let code = resolver.code(named: name) {
            if code.type == keyEventType { return .key(code.code) }
            if code.type == absoluteEventType { throw ButtonMapError(.axisWithoutDirection(name: name), line: line) }
            throw ButtonMapError(.notAButton(name: name), line: line)
        }
        let suggestion = EditDistance.closest(to: name, among: bindableNames(resolver))
        throw ButtonMapError(.unknownButton(name: rawName, suggestion: suggestion), line: line)
    }

    /// Every name a binding may use: key names and both directions of every axis.
    static func bindableNames(_ resolver: any EventCodeResolver) -> [String] {
        var names: [String] = []
        for name in resolver.knownNames {
            guard let code = resolver.code(named: name) else { continue }
            if code.type == keyEventType {
                names.append(name)
            } else if code.type == absoluteEventType {
                names.append(name + "-")
                names.append(name + "+")
            }
        }
        return names
    }
}
