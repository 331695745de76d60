/// Looks up evdev code names (`BTN_SOUTH`, `KEY_SPACE`, `ABS_HAT0X`); libevdev backs it at run time.
public protocol EventCodeResolver {
    /// The code for `name`, or nil when no such name exists.
    func code(named name: String) -> EventCode?
    /// The name of a code, e.g. `BTN_SOUTH`, if it has one.
    func name(of code: EventCode) -> String?
    /// Every name the resolver knows (for "did you mean …" suggestions).
    var knownNames: [String] { get }
}
