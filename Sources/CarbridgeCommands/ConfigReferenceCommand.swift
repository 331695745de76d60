import ArgumentParser
import DriveConfig

/// `carbridge config-reference --format toml|man`: the documentation of every config key, rendered from
/// the key declarations (how `config/carbridge.toml` is made; a test keeps the committed file equal).
struct ConfigReferenceCommand: CarbridgeCommand {
    /// What to print.
    enum Format: String, CaseIterable, ExpressibleByArgument {
        /// The commented reference config, every key at its default.
        case toml
        /// The `carbridge.toml(5)` man page (roff).
        case man
    }

    static let configuration = CommandConfiguration(
        commandName: "config-reference",
        abstract: "Print the reference of every config key: a commented carbridge.toml, or the carbridge.toml(5) man page.",
        discussion: """
            Both are rendered from the declarations of the keys (type, default, range, doc), the same ones the \
            loader, check-config and run's flags use. config/carbridge.toml is this command's toml output; \
            read the man page with: carbridge config-reference --format man | man -l -
            """)

    @Option(name: .long, help: ArgumentHelp("toml (a commented config file) or man (roff).", valueName: "format"))
    var format: Format = .toml

    func run() throws {
        switch format {
        case .toml: print(ConfigReference.toml(), terminator: "")
        case .man: print(ConfigReference.manPage(), terminator: "")
        }
    }
}
