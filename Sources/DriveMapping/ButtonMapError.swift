/// Why a button map from the config was rejected; the message names the bad entry and what to do.
public struct ButtonMapError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Hashable, Sendable {
        /// No key, button or axis has this name; `suggestion` is the closest known name.
        case unknownButton(name: String, suggestion: String?)
        /// The name is an axis used without a direction (`ABS_HAT0X` instead of `ABS_HAT0X-`).
        case axisWithoutDirection(name: String)
        /// The name exists but is neither a key nor an axis (e.g. `REL_X`).
        case notAButton(name: String)
        /// No such action; `suggestion` is the closest valid one.
        case unknownAction(action: String, button: String, suggestion: String?)
        /// The same button is bound twice in the same table.
        case duplicate(name: String, firstLine: Int?)
        /// `deadman` cannot take part in long-press bindings.
        case deadmanWithLongPress(name: String)
    }

    /// What went wrong.
    public var reason: Reason
    /// The config line, when known.
    public var line: Int?

    /// Creates an error.
    public init(_ reason: Reason, line: Int?) {
        self.reason = reason
        self.line = line
    }

    public var description: String {
        let prefix = line.map { "line \($0): " } ?? ""
        switch reason {
        case .unknownButton(let name, let suggestion):
            let hint = suggestion.map { " (did you mean \"\($0)\"?)" }
                ?? " (use an evdev name such as \"BTN_SOUTH\" or \"KEY_SPACE\", or a hat direction such as \"ABS_HAT0X-\")"
            return "\(prefix)unknown button name \"\(name)\"\(hint)"
        case .axisWithoutDirection(let name):
            return "\(prefix)\"\(name)\" is an axis; bind one of its directions: \"\(name)-\" or \"\(name)+\""
        case .notAButton(let name):
            return "\(prefix)\"\(name)\" is not a key, button or axis and cannot be bound"
        case .unknownAction(let action, let button, let suggestion):
            let hint = suggestion.map { " (did you mean \"\($0)\"?)" } ?? ""
            return "\(prefix)unknown action \"\(action)\" for button \"\(button)\"\(hint); valid actions: \(ButtonAction.validNames)"
        case .duplicate(let name, let firstLine):
            let first = firstLine.map { " (first bound on line \($0))" } ?? ""
            return "\(prefix)button \"\(name)\" is bound twice\(first); keep one binding"
        case .deadmanWithLongPress(let name):
            return "\(prefix)button \"\(name)\": \"deadman\" cannot be combined with a long-press binding; use another button"
        }
    }
}
