import DriveConfig
import DriveRuntime
import DriveSystem
import Glibc
import Logging

/// Where `carbridge run` gets its web dashboard: the dashboard (Hummingbird, SwiftNIO and their
/// dependencies: 2,250 of the static program's 6,300 conformance records) is linked only into `carbridge-dashboard`,
/// a second executable with the same commands. A run with `[dashboard] listen` set in `carbridge`
/// execs that program with its own command line (same process, same PID for systemd); a run without
/// it never maps a page of the dashboard's code, and every conformance lookup at start scans less.
///
/// `carbridge-dashboard` is looked up next to the running executable (a build directory, or both in
/// /usr/bin), then in `PREFIX/libexec/carbridge/` for an executable in `PREFIX/bin` (the package's
/// /usr/libexec/carbridge).
package enum DashboardBuild {
    /// Makes the dashboard extension of a run from its config (the one place that names the type).
    package typealias Factory = @Sendable (CarbridgeConfig, Logger) -> any RunSessionExtension

    /// Set by `carbridge-dashboard`'s `main` before the command runs; nil in `carbridge`.
    nonisolated(unsafe) package static var factory: Factory?

    /// The dashboard executable's file name.
    package static let executableName = "carbridge-dashboard"

    /// Set in the environment of the exec, so a program of that name without the dashboard (a copy of
    /// `carbridge`) fails with a reason instead of exec'ing itself for ever.
    static let execMarker = "CARBRIDGE_DASHBOARD_EXEC"

    /// The dashboard factory of this executable; in `carbridge`, execs `carbridge-dashboard` with this
    /// process's arguments and does not return, or throws why it cannot.
    static func dashboardFactory() throws(CarbridgeError) -> Factory {
        if let factory {
            unsetenv(execMarker)   // not for whatever this run starts
            return factory
        }
        let own = executablePath()
        if getenv(execMarker) != nil {
            throw CarbridgeError(
                "\(own ?? "this program") was started as the dashboard build of carbridge but has no dashboard "
                    + "(a copy of carbridge named \(executableName)?): reinstall carbridge")
        }
        let candidates = own.map(candidatePaths(besides:)) ?? []
        guard let path = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw CarbridgeError(
                "the dashboard is on ([dashboard] listen or --dashboard) but its program \(executableName) is not "
                    + "installed (looked for \(candidates.isEmpty ? executableName : candidates.joined(separator: ", "))); "
                    + "turn the dashboard off or reinstall carbridge")
        }
        setenv(execMarker, "1", 1)
        let arguments = CommandLine.arguments
        let argv = arguments.map { strdup($0) } + [nil]
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        unsetenv(execMarker)
        throw CarbridgeError("cannot start the dashboard build \(path): \(reason)")
    }

    /// Where `carbridge-dashboard` may be, in order, for the executable at `executable`.
    static func candidatePaths(besides executable: String) -> [String] {
        let directory = parent(executable)
        var paths = [directory + "/" + executableName]
        if directory.hasSuffix("/bin") {
            paths.append(parent(directory) + "/libexec/carbridge/" + executableName)
        }
        return paths
    }

    /// The running executable's path (`/proc/self/exe`), or nil.
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
