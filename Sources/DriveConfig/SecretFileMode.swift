import Glibc

/// Whether a config file that holds a secret (`[dashboard] token`) can be read by every user of the machine.
public enum SecretFileMode {
    /// A warning naming `path` and the command that fixes it when the file is readable by others (`o+r`);
    /// nil when it is not, or when it cannot be looked at (the read itself reports that).
    public static func warning(tokenIn path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let mode = status.st_mode & 0o7777
        guard mode & 0o004 != 0 else { return nil }
        let octal = String(mode, radix: 8)
        return "\(path) holds [dashboard] token and every user of this machine can read it (mode 0\(octal)): "
            + "chmod o-r \(path) (the package installs it 0640 root:carbridge)"
    }
}
