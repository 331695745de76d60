import Foundation

/// A private `dbus-daemon --session` for the D-Bus tests: its address, and the daemon stopped with it.
package final class PrivateBus {
    /// The bus address (`unix:path=…,guid=…`), for `DBusConnection.Bus.address`.
    package let address: String
    private let daemon: Process

    /// Starts a daemon; nil when there is no `/usr/bin/dbus-daemon` or it printed no address (the
    /// caller skips its test then).
    package init?() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var text = ""
        // The daemon prints its address as one line once it listens: read until that line ends.
        while !text.contains("\n") {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let address = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !address.isEmpty else {
            process.terminate()
            process.waitUntilExit()
            return nil
        }
        self.daemon = process
        self.address = address
    }

    /// Stops the daemon.
    package func stop() {
        guard daemon.isRunning else { return }
        daemon.terminate()
        daemon.waitUntilExit()
    }

    deinit { stop() }
}
