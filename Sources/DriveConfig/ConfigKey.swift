/// One key of `carbridge.toml`, declared once (in `ConfigKeys`): its table and name, what it holds and
/// which values it allows, its default, its documentation, and where its typed value goes in
/// `CarbridgeConfig`. The loader, the built-in defaults, `carbridge run`'s flags, `check-config`'s messages
/// and the generated reference (`carbridge config-reference`) all read this one declaration.
public struct ConfigKey<Value: Sendable>: Sendable {
    /// The TOML table, e.g. `drive`.
    public let table: String
    /// The key in its table, e.g. `max_speed`.
    public let name: String
    /// The TOML type and the values allowed.
    public let kind: ConfigKind
    /// The default as a TOML value (what the reference file writes).
    public let defaultScalar: ConfigScalar
    /// The default as the typed value `CarbridgeConfig` holds.
    public let defaultValue: Value
    /// One line: what the key does.
    public let doc: String
    /// More comment lines for the reference file and the man page (examples, the forms a value takes).
    public let details: [String]
    /// Checks a value of the right TOML type against `kind` and any rule of the key's own, and converts it.
    private let convert: @Sendable (ConfigScalar) throws(ConfigValueError) -> Value
    /// Where the value goes, built the first time it is asked for.
    ///
    /// Every start reads the defaults of about 40 keys (`CarbridgeConfig`'s properties start at them), and
    /// instantiating a key path from its literal was nearly all of a key's declaration: about 4 % of a
    /// start's time (host `perf`, 100 starts of `carbridge run`). Only a key the file or a flag sets needs it.
    private let makeKeyPath: @Sendable () -> WritableKeyPath<CarbridgeConfig, Value> & Sendable

    /// Where the value goes.
    var keyPath: WritableKeyPath<CarbridgeConfig, Value> & Sendable { makeKeyPath() }

    /// Declares a key whose TOML value `convert` checks (after `kind`'s range or spelling) and turns into
    /// the typed value stored at `keyPath`. The default must pass its own checks.
    init(
        _ table: String, _ name: String, _ kind: ConfigKind, default defaultScalar: ConfigScalar, doc: String,
        details: [String] = [], at keyPath: @escaping @autoclosure @Sendable () -> WritableKeyPath<CarbridgeConfig, Value> & Sendable,
        convert: @escaping @Sendable (ConfigScalar) throws(ConfigValueError) -> Value
    ) {
        self.table = table
        self.name = name
        self.kind = kind
        self.defaultScalar = defaultScalar
        self.doc = doc
        self.details = details
        makeKeyPath = keyPath
        let checked: @Sendable (ConfigScalar) throws(ConfigValueError) -> Value = { scalar throws(ConfigValueError) in
            if let problem = kind.problem(with: scalar) { throw ConfigValueError(problem) }
            return try convert(scalar)
        }
        self.convert = checked
        do {
            defaultValue = try checked(defaultScalar)
        } catch {
            preconditionFailure("\(table).\(name): the default \(defaultScalar) fails its own declaration: \(error)")
        }
    }

    /// `table.name`, as errors name the key.
    public var path: String { "\(table).\(name)" }

    /// Checks and converts a value given in TOML terms (a file's value, or a flag's once typed).
    public func value(from scalar: ConfigScalar) throws(ConfigValueError) -> Value {
        try convert(scalar)
    }

    /// Checks and converts a command-line argument: read as the key's TOML type, then as a file's value.
    public func value(fromArgument text: String) throws(ConfigValueError) -> Value {
        try convert(kind.scalar(fromArgument: text))
    }

    /// The key's value from a command-line argument, ready to apply over a loaded config.
    public func override(fromArgument text: String) throws(ConfigValueError) -> ConfigOverride {
        let value = try value(fromArgument: text)
        let keyPath = keyPath
        return ConfigOverride(path: path) { $0[keyPath: keyPath] = value }
    }

    /// `--help` text for a flag that overrides this key: the doc, the allowed values and the default.
    public var flagHelp: String {
        var text = doc.hasSuffix(".") ? String(doc.dropLast()) : doc
        var facts: [String] = []
        if let allowed = kind.allowedText { facts.append(allowed) }
        facts.append("default \(defaultScalar)")
        text += " (\(facts.joined(separator: "; "))); overrides [\(table)] \(name)."
        return text
    }
}

extension ConfigKey where Value == Int {
    /// An integer key stored as it is; `check` adds a rule of its own (nil = fine).
    static func integer(
        _ table: String, _ name: String, default value: Int, range: ClosedRange<Int>, doc: String, details: [String] = [],
        at keyPath: @escaping @autoclosure @Sendable () -> WritableKeyPath<CarbridgeConfig, Int> & Sendable, check: @escaping @Sendable (Int) -> String? = { _ in nil }
    ) -> ConfigKey<Int> {
        ConfigKey(table, name, .integer(range), default: .integer(value), doc: doc, details: details, at: keyPath()) {
            scalar throws(ConfigValueError) in
            let number = scalar.integerValue ?? value
            if let problem = check(number) { throw ConfigValueError(problem) }
            return number
        }
    }
}

extension ConfigKey where Value == Double {
    /// A number key (integers accepted) stored as it is.
    static func number(
        _ table: String, _ name: String, default value: Double, range: ClosedRange<Double>, doc: String,
        details: [String] = [], at keyPath: @escaping @autoclosure @Sendable () -> WritableKeyPath<CarbridgeConfig, Double> & Sendable
    ) -> ConfigKey<Double> {
        ConfigKey(table, name, .number(range), default: .number(value), doc: doc, details: details, at: keyPath()) {
            $0.numberValue ?? value
        }
    }
}

extension ConfigKey where Value == Bool {
    /// A true/false key.
    static func boolean(
        _ table: String, _ name: String, default value: Bool, doc: String, details: [String] = [],
        at keyPath: @escaping @autoclosure @Sendable () -> WritableKeyPath<CarbridgeConfig, Bool> & Sendable
    ) -> ConfigKey<Bool> {
        ConfigKey(table, name, .boolean, default: .boolean(value), doc: doc, details: details, at: keyPath()) {
            if case .boolean(let flag) = $0 { return flag }
            return value
        }
    }
}

extension ConfigKey where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// A key spelled as one of an enum's raw values.
    static func choice(
        _ table: String, _ name: String, default value: Value, doc: String, details: [String] = [],
        at keyPath: @escaping @autoclosure @Sendable () -> WritableKeyPath<CarbridgeConfig, Value> & Sendable
    ) -> ConfigKey<Value> {
        ConfigKey(
            table, name, .choice(Value.allCases.map(\.rawValue)), default: .string(value.rawValue), doc: doc,
            details: details, at: keyPath()
        ) { Value(rawValue: $0.stringValue ?? "") ?? value }
    }
}

/// A config key's value from the command line, checked by the key's declaration, applied over the
/// loaded config (flags override the file).
public struct ConfigOverride: Sendable {
    /// The key it sets, `table.name`.
    public let path: String
    private let set: @Sendable (inout CarbridgeConfig) -> Void

    init(path: String, set: @escaping @Sendable (inout CarbridgeConfig) -> Void) {
        self.path = path
        self.set = set
    }

    /// Sets the key in `config`.
    public func apply(to config: inout CarbridgeConfig) { set(&config) }
}

/// Why a value is not valid for its key (without the key and the place: the loader adds `file:line: key:`,
/// a command-line flag its name).
public struct ConfigValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong and what would be right.
    public let message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
