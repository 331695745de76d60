/// A `ConfigKey` of any value type: what the loader and the reference need to go over every key.
public protocol AnyConfigKey: Sendable {
    /// The TOML table, e.g. `drive`.
    var table: String { get }
    /// The key in its table, e.g. `max_speed`.
    var name: String { get }
    /// The TOML type and the values allowed.
    var kind: ConfigKind { get }
    /// The default as a TOML value.
    var defaultScalar: ConfigScalar { get }
    /// One line: what the key does.
    var doc: String { get }
    /// More comment lines (examples, the forms a value takes).
    var details: [String] { get }
    /// `--help` text for a flag that overrides the key: the doc, the allowed values and the default.
    var flagHelp: String { get }
    /// The key's value from a command-line argument, ready to apply over a loaded config.
    func override(fromArgument text: String) throws(ConfigValueError) -> ConfigOverride
    /// Reads the key from its table into `config`, which keeps its value when the key is absent; a wrong
    /// type or a value the declaration rejects is a `ConfigError` at the key's line.
    func read(from table: ConfigTable, into config: inout CarbridgeConfig) throws(ConfigError)
}

extension ConfigKey: AnyConfigKey {
    public func read(from table: ConfigTable, into config: inout CarbridgeConfig) throws(ConfigError) {
        guard let scalar = try table.scalar(name, as: kind) else { return }
        do {
            config[keyPath: keyPath] = try value(from: scalar)
        } catch {
            throw table.error(name, error.message)
        }
    }
}
