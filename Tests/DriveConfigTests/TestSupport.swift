import DriveConfig
import DriveInput

typealias LibevdevNames = EventCodeNames

extension CarbridgeConfig {
    /// Parses with libevdev's names, as the commands do.
    static func parse(text: String, file: String) throws(ConfigError) -> CarbridgeConfig {
        try parse(text: text, file: file, resolver: EventCodeNames())
    }

    /// Parses with libevdev's names, as the commands do; every problem.
    static func load(text: String, file: String) throws(ConfigErrors) -> CarbridgeConfig {
        try load(text: text, file: file, resolver: EventCodeNames())
    }
}
