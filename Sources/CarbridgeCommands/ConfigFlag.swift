import ArgumentParser
import DriveConfig

/// How a `run` flag that overrides a config key reads its value: with the key's declaration
/// (`ConfigKeys`), so the range, the rounding and the message are exactly the config file's. A bad value
/// is a usage error that names the flag (exit status 64).
enum ConfigFlag {
    /// The `transform:` of an `@Option` that sets `key`.
    static func parser<Value>(_ key: ConfigKey<Value>) -> @Sendable (String) throws -> ConfigOverride {
        { text in
            do {
                return try key.override(fromArgument: text)
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }
}
