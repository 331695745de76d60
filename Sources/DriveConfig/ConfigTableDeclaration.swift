import DriveMapping

/// One table of `carbridge.toml` as `ConfigKeys` declares it: its name, a line of documentation, and
/// either its keys or, for `[buttons]`, the free-form `BUTTON = "action"` bindings it holds.
public struct ConfigTableDeclaration: Sendable {
    /// A table of `BUTTON = "action"` entries (`[buttons]`), with a sub-table for long presses.
    public struct Bindings: Sendable {
        /// The actions a binding may name.
        public let actions: [String]
        /// The bindings used when the file has no such table.
        public let defaults: [CarbridgeConfig.Binding]
        /// The sub-table of long-press bindings (`long_press`).
        public let longPressTable: String
        /// One line about the sub-table.
        public let longPressDoc: String
    }

    /// The table's name, e.g. `link`.
    public let name: String
    /// One line: what the table is for.
    public let doc: String
    /// Its keys, in reference order (none for a bindings table).
    public let keys: [any AnyConfigKey]
    /// For `[buttons]`: what its entries are.
    public let bindings: Bindings?
    /// A rule across the table's keys, checked once they are read: the problem, and the keys it is about
    /// (reported at the first of them the file sets, else the last).
    let rule: (@Sendable (CarbridgeConfig) -> (message: String, keys: [String])?)?

    /// A table of declared keys, with a `rule` across them if any.
    init(
        _ name: String, doc: String, keys: [any AnyConfigKey],
        rule: (@Sendable (CarbridgeConfig) -> (message: String, keys: [String])?)? = nil
    ) {
        self.name = name
        self.doc = doc
        self.keys = keys
        self.bindings = nil
        self.rule = rule
    }

    /// A table of bindings.
    init(_ name: String, doc: String, bindings: Bindings) {
        self.name = name
        self.doc = doc
        self.keys = []
        self.bindings = bindings
        self.rule = nil
    }
}
