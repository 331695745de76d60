/// A key the terminal keyboard can press.
public enum TerminalKey: Hashable, Sendable {
    case up, down, left, right
    /// A printable character (already lower-cased for letters).
    case character(Character)
    /// Ctrl-C or Ctrl-D typed while the terminal does not turn them into signals.
    case interrupt
}
