import DriveConfig
import DriveInput
import Glibc

/// Chooses each pad's layout, in this order: the config's `[buttons]` table (no translation: its names
/// are the pad's own codes), the user's DB file (`[devices] mapping_db`), SDL's environment variables
/// (`SDL_GAMECONTROLLERCONFIG`: mapping lines; `SDL_GAMECONTROLLERCONFIG_FILE`: a file, as SDL reads
/// them), the built-in community DB, and the kernel's codes as they are.
///
/// The DBs are read when the resolver is made (a missing or unreadable user file is an error then),
/// and parsed on the first pad that needs them.
public final class PadLayoutResolver {
    /// A pad's layout and, for a pad without one, the notice to show once.
    public struct Resolution: Sendable {
        /// The layout.
        public var layout: PadLayout
        /// For a pad with no DB entry and no gamepad codes: what to do about it.
        public var notice: String?
        /// Problems found in the DB texts (bad lines), to log once.
        public var problems: [String]
    }

    private let usesButtonsTable: Bool
    private let texts: [(text: String, source: GameControllerDB.Source, requirePlatform: Bool)]
    /// The user's lines parsed once (they are few, and their problems are worth one warning each).
    private var userDatabase: GameControllerDB?
    private var problems: [String] = []

    /// Reads the user's sources for `config`; `environment` is looked up for SDL's variables (the
    /// process's environment by default). Throws a `CarbridgeError` naming a DB file that cannot be read.
    public init(config: CarbridgeConfig, environment: (String) -> String? = PadLayoutResolver.processEnvironment) throws {
        usesButtonsTable = config.hasButtonsTable
        var texts: [(String, GameControllerDB.Source, Bool)] = [(ShippedGameControllerDB.text, .shipped, true)]
        func read(_ path: String, what: String) throws -> String {
            switch GameControllerDB.readFile(path) {
            case .success(let text): return text
            case .failure(let error): throw CarbridgeError("cannot read the GameControllerDB file \(path) (\(what)): \(error)")
            }
        }
        // Added lowest priority first: a later source's line replaces an earlier one for the same pad.
        if let path = environment("SDL_GAMECONTROLLERCONFIG_FILE"), !path.isEmpty {
            texts.append((try read(path, what: "SDL_GAMECONTROLLERCONFIG_FILE"), .file(path), true))
        }
        if let lines = environment("SDL_GAMECONTROLLERCONFIG"), !lines.isEmpty {
            texts.append((lines, .environment, false))
        }
        if let path = config.devices.mappingDB {
            texts.append((try read(path, what: "[devices] mapping_db"), .file(path), true))
        }
        self.texts = texts
    }

    /// `getenv`.
    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The layout of the pad `info` describes.
    public func resolve(_ info: InputDeviceInfo) -> Resolution {
        if usesButtonsTable { return Resolution(layout: .untranslated(.buttonsTable), notice: nil, problems: []) }
        let guid = SDLJoystickGUID(
            bustype: info.bustype, vendor: info.vendor, product: info.product, version: info.version, name: info.name)
        let database = database(for: guid)
        let reported = problems
        problems = []
        if let entry = database.entry(for: guid) {
            let origin = PadLayout.Origin.database(name: entry.mapping.name, source: entry.source, line: entry.line)
            return Resolution(layout: PadLayout(mapping: entry.mapping, info: info, origin: origin), notice: nil, problems: reported)
        }
        var notice: String?
        if !info.hasGamepadButtons {
            notice = "\"\(info.name)\" (\(info.vendorProduct), SDL GUID \(guid.with(crc: 0))) is in no GameControllerDB and "
                + "has no standard gamepad buttons, so the default [buttons] table does nothing on it: run "
                + "`carbridge monitor` to see its codes and bind them in [buttons] (or add its line to [devices] mapping_db)"
        }
        return Resolution(layout: .untranslated(.kernel), notice: notice, problems: reported)
    }

    /// The lines that may match `guid`: the built-in DB's few candidates (a full parse of its 700 lines
    /// would hold the loop for seconds on a slow machine), then the user's sources, later ones winning.
    private func database(for guid: SDLJoystickGUID) -> GameControllerDB {
        if userDatabase == nil {
            var loaded = GameControllerDB()
            for (text, source, requirePlatform) in texts where source != .shipped {
                problems += loaded.add(text: text, source: source, requirePlatform: requirePlatform).map(\.description)
            }
            userDatabase = loaded
        }
        var database = GameControllerDB()
        database.add(text: ShippedGameControllerDB.text, source: .shipped, only: guid)
        for entry in userDatabase?.entries ?? [] { database.add(entry) }
        return database
    }
}
