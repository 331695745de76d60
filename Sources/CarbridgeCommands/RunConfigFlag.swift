import ArgumentParser
import DriveConfig

/// One of `run`'s flags that override a config key, and the key it sets: the one table of them.
///
/// `RunCommand`'s `@Option`s take their help and their `transform:` from it, so which key a flag sets, and
/// how its value is read, is written once, with the key's declaration.
enum RunConfigFlag: Int, CaseIterable {
    // `RunCommand`'s order, which is the order the overrides are applied in.
    case link, maxSpeed, periodMs, idleTimeout, terminator, dashboard

    /// The config key the flag overrides.
    var key: any AnyConfigKey {
        switch self {
        case .link: ConfigKeys.url
        case .maxSpeed: ConfigKeys.maxSpeed
        case .periodMs: ConfigKeys.period
        case .idleTimeout: ConfigKeys.idleTimeout
        case .terminator: ConfigKeys.terminator
        case .dashboard: ConfigKeys.listen
        }
    }

    /// The `transform:` of the flag's `@Option`: the value read with the key's declaration, so its range,
    /// rounding and message are the config file's; a bad value is a usage error that names the flag (exit
    /// status 64).
    var parse: @Sendable (String) throws -> ConfigOverride {
        let key = key
        return { text in
            do {
                return try key.override(fromArgument: text)
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }
}
