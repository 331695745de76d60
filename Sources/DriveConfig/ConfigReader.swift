import DriveMapping

/// Reads a parsed config file into a `CarbridgeConfig` table by table, as `ConfigKeys` declares them,
/// collecting every problem: a key that fails keeps its default and the reading goes on.
struct ConfigReader {
    private var errors: [ConfigError] = []

    /// Reads every declared table of `top` into `config`; returns the problems (in reading order).
    static func read(_ top: ConfigTable, into config: inout CarbridgeConfig) -> [ConfigError] {
        var reader = ConfigReader()
        for declaration in ConfigKeys.tables {
            guard let table = reader.table(declaration.name, in: top) else { continue }
            var failed: Set<String> = []
            if let bindings = declaration.bindings {
                reader.readBindings(table, bindings, into: &config)
            } else {
                failed = reader.readKeys(declaration.keys, from: table, into: &config)
            }
            // A key whose value was bad kept its default, which the rule would judge: its own error says it.
            if let problem = declaration.rule?(config), failed.isDisjoint(with: problem.keys) {
                reader.report(problem, in: table)
            }
            reader.errors += table.unknownKeyErrors()
        }
        // A dead-man binding anywhere makes the dead-man button required.
        if (config.buttons + config.longPressButtons).contains(where: { $0.action == .deadman }) {
            config.drive.deadmanRequired = true
        }
        reader.errors += top.unknownKeyErrors()
        return reader.errors
    }

    /// The sub-table `name` of `parent`; nil when absent or not a table (a problem).
    private mutating func table(_ name: String, in parent: ConfigTable) -> ConfigTable? {
        do {
            return try parent.table(name)
        } catch {
            errors.append(error)
            return nil
        }
    }

    /// A table of declared keys: each is read, checked and converted by its declaration. Returns the names
    /// of the keys that failed.
    private mutating func readKeys(
        _ keys: [any AnyConfigKey], from table: ConfigTable, into config: inout CarbridgeConfig
    ) -> Set<String> {
        var failed: Set<String> = []
        for key in keys {
            do {
                try key.read(from: table, into: &config)
            } catch {
                errors.append(error)
                failed.insert(key.name)
            }
        }
        return failed
    }

    /// A table rule's problem, at the first of its keys the file sets (else the last). (`line(of:)` gives
    /// a key the file does not set its table's line, so whether it is set is asked of the table's keys.)
    private mutating func report(_ problem: (message: String, keys: [String]), in table: ConfigTable) {
        let present = Set(table.keys)
        let key = problem.keys.first { present.contains($0) } ?? problem.keys.last ?? ""
        errors.append(table.error(key, problem.message))
    }

    /// `[buttons]` and its `[buttons.long_press]`: with the table present, exactly the bindings it lists.
    private mutating func readBindings(
        _ table: ConfigTable, _ declaration: ConfigTableDeclaration.Bindings, into config: inout CarbridgeConfig
    ) {
        let longPress = self.table(declaration.longPressTable, in: table)
        config.buttons = bindings(in: table, skipping: declaration.longPressTable)
        config.longPressButtons = longPress.map { bindings(in: $0) } ?? []
        if let longPress { errors += longPress.unknownKeyErrors() }
    }

    /// The entries of a bindings table whose action is known; the others are problems. (`skipping` a key
    /// read as something else: `long_press`, reported already when it is not a table.)
    private mutating func bindings(in table: ConfigTable, skipping skipped: String? = nil) -> [CarbridgeConfig.Binding] {
        var problems: [ConfigError] = []
        let found = table.stringEntries { problems.append($0) }.filter { $0.key != skipped }.compactMap {
            entry -> CarbridgeConfig.Binding? in
            guard let action = ButtonAction(rawValue: entry.value) else {
                problems.append(table.error(
                    entry.key,
                    "unknown action \"\(entry.value)\"; actions are \(ButtonAction.allCases.map(\.rawValue).joined(separator: ", "))"))
                return nil
            }
            return CarbridgeConfig.Binding(button: entry.key, action: action, line: entry.line)
        }
        errors += problems
        return found
    }
}
